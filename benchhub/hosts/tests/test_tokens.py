"""Runner tokens: issued once by `runner_create`, stored hashed, revocable, expiring."""

import json
from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.hosts.models import RunnerToken
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload


def upload(token: str, payload=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.post(
        "/api/v1/runs/", data=json.dumps(payload or run_payload()), content_type="application/json"
    )


def test_it_prints_a_working_token_once_and_stores_only_its_hash(db):
    out = StringIO()
    call_command("runner_create", "bench-01", stdout=out, stderr=StringIO())
    plaintext = out.getvalue().strip()
    assert plaintext.startswith("bhr_")
    token = RunnerToken.objects.get(host__name="bench-01")
    assert plaintext not in (token.digest, token.prefix)
    assert upload(plaintext).status_code == 201
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_it_refuses_a_revoked_token_at_once(agent):
    assert upload(agent.token).status_code == 201
    call_command("runner_revoke", "bench-01", stdout=StringIO())
    response = upload(agent.token)
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]
    assert Run.objects.count() == 1


def test_it_refuses_an_expired_token(agent):
    RunnerToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert upload(agent.token).status_code == 401


def test_it_refuses_a_forged_token_with_a_real_prefix(agent):
    kind, prefix, _ = agent.token.split("_", 2)
    assert upload(f"{kind}_{prefix}_{'A' * 43}").status_code == 401
    assert upload("bhr_garbage").status_code == 401
