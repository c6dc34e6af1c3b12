"""BENCHHUB_PRIVATE: anonymous visitors get the sign-in page and /healthz only; people who sign
in and agents with their tokens work as on a public instance."""

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from benchhub.accounts.services import personal_token_create
from benchhub.testing.payloads import run_payload

PAGES = [
    "/",
    "/compare/",
    "/history/",
    "/experiments/",
    "/jobs/",
    "/jobs/1/",
    "/workloads/",
    "/review/",
    "/diff/",
    "/import/",
    "/runs/00000000-0000-0000-0000-000000000000/",
    "/api/docs/",
]
API = [
    "/api/v1/runs/",
    "/api/v1/jobs/",
    "/api/v1/status/",
    "/api/v1/hosts/",
    "/api/v1/builds/",
    "/api/v1/schedules/",
    "/api/v1/workloads/catalog/",
    "/api/v1/review/events/",
    "/api/v1/compare/?workload=select-only&versions=13,14",
]


@pytest.fixture
def private(settings):
    settings.PRIVATE = True


@pytest.mark.parametrize("path", PAGES)
def test_it_sends_anonymous_visitors_of_pages_to_sign_in(private, db, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("path", API)
def test_it_answers_anonymous_api_calls_with_401(private, db, path):
    response = APIClient().get(path)
    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


def test_it_does_not_serve_the_schema_to_anonymous_callers(private, db):
    assert APIClient().get("/api/schema/").status_code == 401


def test_it_keeps_out_an_authorization_header_that_is_no_token(private, db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic Ym9iOmJvYi1wYXNzLTE=")
    assert client.get("/api/v1/runs/").status_code == 401


def test_it_still_serves_the_sign_in_page_healthz_and_static_files(private, db):
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/admin/").status_code == 302  # the admin's own sign-in
    assert client.get("/admin/login/").status_code == 200


def test_it_lets_people_who_sign_in_read_as_usual(private, bob):
    client = Client()
    client.force_login(bob)
    for path in ["/", "/compare/", "/jobs/", "/workloads/", "/review/"]:
        assert client.get(path).status_code == 200, path
    assert client.get("/api/v1/runs/").status_code == 200
    _, token = personal_token_create(user=bob, name="script")
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert script.get("/api/v1/runs/").status_code == 200


def test_it_keeps_agents_working_with_their_tokens(private, agent):
    upload = agent.client.post(
        "/api/v1/runs/", data=json.dumps(run_payload()), content_type="application/json"
    )
    assert upload.status_code == 201
    assert agent.client.post("/api/v1/jobs/claim/").status_code == 204


def test_it_lets_anyone_read_a_public_instance(agent, db):
    agent.client.post(
        "/api/v1/runs/", data=json.dumps(run_payload()), content_type="application/json"
    )
    assert Client().get("/").status_code == 200
    assert len(APIClient().get("/api/v1/runs/").json()["results"]) == 1
