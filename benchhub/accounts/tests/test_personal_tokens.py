"""People create personal tokens (signed in) and use them from scripts."""

import json

from rest_framework.test import APIClient

from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload


def test_it_creates_a_token_that_uploads_as_its_owner(bob):
    session = APIClient()
    session.force_login(bob)
    created = session.post(
        "/api/v1/tokens/", {"name": "laptop", "scopes": ["read", "import"]}, format="json"
    )
    assert created.status_code == 201
    plaintext = created.json()["token"]
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    payload = run_payload(source="import")
    response = script.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201
    assert Run.objects.get(uuid=payload["run_uuid"]).submitted_by == bob
    listed = session.get("/api/v1/tokens/").json()
    assert [t["name"] for t in listed] == ["laptop"] and "token" not in listed[0]


def test_it_refuses_a_revoked_personal_token(bob):
    session = APIClient()
    session.force_login(bob)
    created = session.post("/api/v1/tokens/", {"name": "ci"}, format="json").json()
    assert session.delete(f"/api/v1/tokens/{created['prefix']}/").status_code == 204
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Bearer {created['token']}")
    assert script.get("/api/v1/tokens/").status_code == 401


def test_it_refuses_personal_tokens_to_agents(agent):
    assert agent.client.post("/api/v1/tokens/", {"name": "x"}, format="json").status_code == 403


def test_it_refuses_tokens_to_anonymous_users(anon_client, db):
    assert anon_client.post("/api/v1/tokens/", {"name": "x"}, format="json").status_code in (
        401,
        403,
    )
