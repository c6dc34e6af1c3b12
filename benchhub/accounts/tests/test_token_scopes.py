"""Personal tokens carry scopes, always expire, and never create tokens."""

from datetime import timedelta

from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.accounts.models import PersonalToken
from benchhub.accounts.services import personal_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.tests.test_queue import JOB
from benchhub.testing.payloads import run_payload


def _bearer(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def _session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_it_creates_read_only_tokens_that_expire_by_default(bob):
    created = _session(bob).post("/api/v1/tokens/", {"name": "laptop"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["scopes"] == ["read"]
    token = PersonalToken.objects.get(prefix=body["prefix"])
    assert timedelta(days=89) < token.expires_at - timezone.now() <= timedelta(days=90)


def test_it_refuses_a_token_that_would_live_past_a_year_or_with_an_unknown_scope(bob):
    session = _session(bob)
    far = (timezone.now() + timedelta(days=400)).isoformat()
    response = session.post("/api/v1/tokens/", {"name": "x", "expires_at": far}, format="json")
    assert response.status_code == 400 and "expires_at" in response.json()["fields"]
    response = session.post("/api/v1/tokens/", {"name": "x", "scopes": ["admin"]}, format="json")
    assert response.status_code == 400 and "scopes[0]" in response.json()["fields"]


def test_it_enforces_each_scope(bob):
    _, read = personal_token_create(user=bob, name="r", scopes=["read"])
    _, imports = personal_token_create(user=bob, name="i", scopes=["read", "import"])
    _, queue = personal_token_create(user=bob, name="q", scopes=["read", "queue"])
    reader = _bearer(read)
    assert reader.get("/api/v1/jobs/").status_code == 200
    refused = reader.post("/api/v1/jobs/", JOB, format="json")
    assert refused.status_code == 403 and "'queue' scope" in refused.json()["detail"]
    upload = run_payload(host="lab-box", source="import")
    assert reader.post("/api/v1/runs/", upload, format="json").status_code == 403
    assert _bearer(queue).post("/api/v1/runs/", upload, format="json").status_code == 403
    assert _bearer(imports).post("/api/v1/runs/", upload, format="json").status_code == 201
    assert _bearer(imports).post("/api/v1/jobs/", JOB, format="json").status_code == 403
    assert _bearer(queue).post("/api/v1/jobs/", JOB, format="json").status_code == 201
    assert Job.objects.count() == 1


def test_it_never_lets_a_personal_token_create_or_revoke_tokens(bob):
    token, plaintext = personal_token_create(user=bob, name="all")
    script = _bearer(plaintext)
    refused = script.post("/api/v1/tokens/", {"name": "more", "scopes": ["queue"]}, format="json")
    assert refused.status_code == 403 and "cannot create tokens" in refused.json()["detail"]
    assert script.delete(f"/api/v1/tokens/{token.prefix}/").status_code == 403
    assert PersonalToken.objects.filter(user=bob).count() == 1
    assert script.get("/api/v1/tokens/").status_code == 200
