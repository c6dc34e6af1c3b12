"""Reading runs: list with filters and cursor pagination, detail, results with progress."""

import json

from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import run_payload


def upload(agent, **kwargs):
    payload = run_payload(**kwargs)
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload


def test_it_lists_runs_newest_first_with_filters(agent, other_agent, anon_client):
    a = upload(agent, version="13.3", started_at="2026-01-01T00:00:00Z")
    b = upload(agent, version="14.0", started_at="2026-02-01T00:00:00Z")
    c = upload(other_agent, host="bench-02", version="14.0", started_at="2026-03-01T00:00:00Z")
    everything = anon_client.get("/api/v1/runs/").json()["results"]
    assert [r["run_uuid"] for r in everything] == [c["run_uuid"], b["run_uuid"], a["run_uuid"]]
    by_version = anon_client.get("/api/v1/runs/", {"version": "14.0"}).json()["results"]
    assert {r["run_uuid"] for r in by_version} == {b["run_uuid"], c["run_uuid"]}
    by_host = anon_client.get("/api/v1/runs/", {"host": "bench-01", "version": "14.0"}).json()
    assert [r["run_uuid"] for r in by_host["results"]] == [b["run_uuid"]]
    since = anon_client.get("/api/v1/runs/", {"started_after": "2026-01-15T00:00:00Z"}).json()
    assert len(since["results"]) == 2


def test_it_refuses_a_bad_filter_naming_it(anon_client, db):
    response = anon_client.get("/api/v1/runs/", {"started_after": "yesterday"})
    assert response.status_code == 400
    assert "started_after" in response.json()["fields"]


def test_it_pages_with_a_cursor(agent, anon_client):
    uuids = [upload(agent)["run_uuid"] for _ in range(5)]
    seen, url = [], "/api/v1/runs/?page_size=2"
    while url:
        page = anon_client.get(url).json()
        seen += [r["run_uuid"] for r in page["results"]]
        url = page["next"]
    assert sorted(seen) == sorted(uuids) and len(seen) == 5


def test_it_shows_a_run_with_its_facts_settings_and_aggregates(agent, anon_client):
    payload = upload(agent, version="14beta1")
    run_aggregate(run_id=Run.objects.get(uuid=payload["run_uuid"]).pk)
    detail = anon_client.get(f"/api/v1/runs/{payload['run_uuid']}/").json()
    assert detail["build"]["stage"] == "beta"
    assert detail["host_facts"]["cpu_model"] == payload["host"]["facts"]["cpu_model"]
    assert detail["settings"]["shared_buffers"] == "128MB"
    assert [a["clients"] for a in detail["aggregates"]] == [1, 2]
    assert detail["workload_definition"]["query_mode"] == "prepared"


def test_it_returns_results_and_progress_as_stored(agent, anon_client):
    payload = upload(agent)
    url = f"/api/v1/runs/{payload['run_uuid']}/results/"
    plain = anon_client.get(url).json()
    assert [(r["clients"], r["repeat"], r["tps"]) for r in plain] == [
        (r["clients"], r["repeat"], r["tps"]) for r in payload["results"]
    ]
    assert "progress" not in plain[0]
    full = anon_client.get(url, {"progress": "true"}).json()["results"]
    assert full[0]["progress"] == payload["results"][0]["progress"]
    assert full[0]["raw_output"] == payload["results"][0]["raw_output"]


def test_it_answers_404_for_an_unknown_run(anon_client, db):
    response = anon_client.get("/api/v1/runs/00000000-0000-0000-0000-000000000000/")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_it_lists_builds_in_version_order(agent, anon_client):
    for version in ("14.1", "9.6.0", "14beta1", "13.3", "14.0", "10.1", "9.5.4"):
        upload(agent, version=version)
    versions = [b["version"] for b in anon_client.get("/api/v1/builds/").json()]
    assert versions == ["9.5.4", "9.6.0", "10.1", "13.3", "14beta1", "14.0", "14.1"]
