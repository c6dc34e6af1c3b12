"""The review API: people comment, tag and mark; agents are refused; the log says who did what."""

import json

import pytest
from rest_framework.test import APIClient

from benchhub.testing.payloads import run_payload


@pytest.fixture
def run_uuid(agent):
    payload = run_payload(version="14.0")
    agent.client.post("/api/v1/runs/", data=json.dumps(payload), content_type="application/json")
    return payload["run_uuid"]


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_authenticate(bob)
    return client


def test_it_lets_a_person_comment_on_a_run_and_renders_it_safely(bob_client, run_uuid):
    url = f"/api/v1/runs/{run_uuid}/comments/"
    response = bob_client.post(url, {"body": "**slow** <script>x()</script>"}, format="json")
    assert response.status_code == 201, response.content
    [comment] = bob_client.get(url).json()
    assert comment["author"] == "bob" and comment["run"] == run_uuid
    assert comment["html"] == "<p><strong>slow</strong> &lt;script&gt;x()&lt;/script&gt;</p>"


def test_it_normalises_the_comparison_key(bob_client, db):
    response = bob_client.post(
        "/api/v1/comparisons/comments/",
        {"key": "/compare/?workload=w&versions=13,14&host=h", "body": "14 wins"},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["comparison_key"] == "host=h&versions=13,14&workload=w"
    thread = bob_client.get(
        "/api/v1/comparisons/comments/", {"key": "host=h&workload=w&versions=13,14"}
    )
    assert [c["body"] for c in thread.json()] == ["14 wins"]


def test_it_refuses_agents_and_strangers(agent, anon_client, run_uuid):
    url = f"/api/v1/runs/{run_uuid}/comments/"
    assert agent.client.post(url, {"body": "hi"}, format="json").status_code == 403
    assert agent.client.get("/api/v1/review/events/").status_code == 403
    assert anon_client.post(url, {"body": "hi"}, format="json").status_code in (401, 403)


def test_it_tags_marks_and_logs(bob_client, run_uuid):
    base = f"/api/v1/runs/{run_uuid}"
    assert bob_client.post(f"{base}/tags/", {"name": "noisy"}, format="json").status_code == 201
    assert bob_client.post(f"{base}/tags/", {"name": "no good"}, format="json").status_code == 400
    marked = bob_client.post(f"{base}/marks/", {"invalid": True, "reason": "swap"}, format="json")
    assert marked.json() == {"run": run_uuid, "baseline": False, "invalid": True}
    assert bob_client.delete(f"{base}/tags/noisy/").status_code == 204
    assert bob_client.delete(f"{base}/tags/noisy/").status_code == 404
    events = bob_client.get("/api/v1/review/events/", {"run": run_uuid}).json()["results"]
    assert [(e["actor"], e["verb"], e["detail"]) for e in events] == [
        ("bob", "untagged", "noisy"),
        ("bob", "marked_invalid", "swap"),
        ("bob", "tagged", "noisy"),
    ]
    detail = bob_client.get(f"/api/v1/runs/{run_uuid}/")
    assert detail.status_code == 200


def test_it_refuses_a_mark_request_that_asks_for_nothing(bob_client, run_uuid):
    response = bob_client.post(f"/api/v1/runs/{run_uuid}/marks/", {}, format="json")
    assert response.status_code == 400


def test_it_lists_every_review_model_in_the_admin(client, alice, bob_client, run_uuid):
    bob_client.post(f"/api/v1/runs/{run_uuid}/comments/", {"body": "x"}, format="json")
    bob_client.post(f"/api/v1/runs/{run_uuid}/tags/", {"name": "x"}, format="json")
    client.force_login(alice)
    for model in ("comment", "tag", "runtag", "reviewevent"):
        response = client.get(f"/admin/review/{model}/")
        assert response.status_code == 200, model
        assert b'name="_selected_action"' in response.content, model


def test_it_refuses_a_malformed_run_in_the_event_log_with_400(bob_client):
    """Found by the schemathesis run: ?run=<not a UUID> crashed the query with a 500."""
    response = bob_client.get("/api/v1/review/events/", {"run": "not-a-uuid"})
    assert response.status_code == 400
    assert "run" in response.json()["fields"]
