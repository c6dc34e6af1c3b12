"""What PostgreSQL refuses never reaches it: NUL characters, lone surrogates, numbers JSON cannot
carry, deep nesting and integers past their column are a 400 naming the field, and a database
error that slips past the edge is still a 400, never a 500."""

import json

import pytest
from django.db import DataError, IntegrityError
from rest_framework.test import APIClient

from benchhub.api.errors import exception_handler
from benchhub.jobs.models import Job
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload

WORKLOAD: dict = dict(JOB["workload"])  # type: ignore[call-overload]


@pytest.fixture
def bob_client(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client


def _post_raw(client: APIClient, path: str, text: str):
    return client.post(path, data=text.encode("utf-8"), content_type="application/json")


def _job_with_options(options_json: str) -> str:
    body = json.dumps({**JOB, "workload": {**WORKLOAD, "options": ["__OPT__"]}})
    return body.replace('"__OPT__"', options_json)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"a\\u0000b"', "NUL"),
        ('"\\ud800"', "surrogate"),
        ("1e999", "finite"),
    ],
)
def test_it_refuses_free_form_json_postgresql_cannot_store_naming_the_field(
    bob_client, value, message
):
    response = _post_raw(bob_client, "/api/v1/jobs/", _job_with_options(value))
    assert response.status_code == 400, response.content
    fields = response.json()["fields"]
    assert list(fields) == ["workload.options[0]"] and message in fields["workload.options[0]"][0]
    assert not Job.objects.exists()


def test_it_refuses_nan_and_infinity_as_json(bob_client):
    for constant in ("NaN", "Infinity", "-Infinity"):
        response = _post_raw(bob_client, "/api/v1/jobs/", _job_with_options(constant))
        assert response.status_code == 400 and response.json()["error"] == "parse_error"


def test_it_refuses_deep_nesting_naming_where(bob_client, agent):
    deep = "[" * 40 + "]" * 40
    response = _post_raw(bob_client, "/api/v1/jobs/", _job_with_options(deep))
    assert response.status_code == 400 and "Nested deeper" in json.dumps(response.json())
    # So deep Python's own decoder would recurse out: still a 400.
    very = "[" * 200_000 + "]" * 200_000
    assert _post_raw(bob_client, "/api/v1/jobs/", very).status_code == 400


def test_it_refuses_a_nul_in_a_host_fact_key_of_an_upload(agent):
    payload = run_payload()
    payload["host"]["extra"] = {"k\u0000": 1}
    response = agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["host.extra.k\u0000"]
    assert not Run.objects.exists()


def test_it_refuses_integers_beyond_their_columns(bob_client, agent):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "scale": 2**31}, format="json")
    assert response.status_code == 400 and "scale" in response.json()["fields"]
    payload = run_payload()
    payload["results"][0]["transactions"] = 2**63
    response = agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 400
    assert any("transactions" in path for path in response.json()["fields"])


def test_it_answers_a_database_error_that_slipped_past_the_edge_with_400():
    for exc in (DataError("value too long for type character varying(50)"), IntegrityError("x")):
        response = exception_handler(exc, {})
        assert response is not None and response.status_code == 400
        assert response.data["error"] == "invalid"
