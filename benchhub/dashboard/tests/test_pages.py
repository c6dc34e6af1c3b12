"""The pages and documents every deployment serves."""

import json
import re

from benchhub.testing.payloads import run_payload


def test_it_lists_recent_runs_with_what_they_ran_on_at_home(agent, client):
    payload = run_payload(version="13.3")
    agent.client.post("/api/v1/runs/", data=json.dumps(payload), content_type="application/json")
    page = client.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "13.3" in html and "bench-01" in html and "Xeon(R) Silver 4210R" in html


def test_it_serves_the_api_schema_and_docs(client, db):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/runs/" in schema.content
    assert b"/api/v1/workloads/catalog/" in schema.content and b"JobWorkloadIn" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    # Swagger UI comes from this server (drf-spectacular-sidecar), never from another host.
    html = docs.content.decode()
    assert not re.findall(r"""(?:src|href)=["']?(?:https?:)?//""", html)
    assert "/static/drf_spectacular_sidecar/" in html


def test_it_asks_for_sign_in_to_the_admin_and_lets_staff_in(client, alice):
    assert client.get("/admin/").status_code == 302
    client.force_login(alice)
    for url in ("/admin/", "/admin/results/run/", "/admin/hosts/host/", "/admin/builds/build/"):
        assert client.get(url).status_code == 200, url


def test_it_answers_healthz(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}
