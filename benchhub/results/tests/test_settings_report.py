"""Overrides a server's major took under another name, or could not take: stored with the run,
shown on its page and in the API, refused when they name something the job did not set."""

import json

from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload

URL = "/api/v1/runs/"
TRANSLATED = "wal_keep_segments = 4 (PostgreSQL 12.22 has no wal_keep_size; 16MB a segment)"


def _payload() -> dict:
    payload = run_payload()
    payload["configuration"].update(
        overrides={"wal_keep_size": "64MB", "jit": "off", "work_mem": "8MB"},
        translated={"wal_keep_size": TRANSLATED},
        not_applied={"jit": "PostgreSQL 10.23 has no setting jit"},
    )
    return payload


def post(client, payload):
    return client.post(URL, data=json.dumps(payload), content_type="application/json")


def test_it_keeps_and_shows_what_the_major_took_differently(agent, client):
    payload = _payload()
    response = post(agent.client, payload)
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert run.settings_translated == {"wal_keep_size": TRANSLATED}
    assert run.settings_not_applied == {"jit": "PostgreSQL 10.23 has no setting jit"}
    page = client.get(f"/runs/{run.uuid}/").content.decode()
    assert 'id="settings-not-applied"' in page
    assert "PostgreSQL 10.23 has no setting jit" in page
    assert "16MB a segment" in page
    detail = agent.client.get(f"/api/v1/runs/{run.uuid}/").json()
    assert detail["settings_not_applied"] == {"jit": "PostgreSQL 10.23 has no setting jit"}


def test_it_refuses_a_report_about_a_setting_the_job_did_not_set(agent):
    payload = _payload()
    payload["configuration"]["not_applied"]["shared_buffers"] = "no"
    response = post(agent.client, payload)
    assert response.status_code == 400
    assert "configuration.not_applied" in response.json()["fields"]
    assert not Run.objects.filter(uuid=payload["run_uuid"]).exists()


def test_a_run_without_a_report_has_none(agent, client):
    payload = run_payload()
    assert post(agent.client, payload).status_code == 201
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert run.settings_translated == run.settings_not_applied == {}
    assert 'id="settings-not-applied"' not in client.get(f"/runs/{run.uuid}/").content.decode()
