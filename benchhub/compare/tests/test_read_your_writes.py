"""A run is in every comparison the moment its upload's 201 returns: no worker has run in these
tests (a `db` test never commits, so nothing is queued), and the compare API already lists both
versions with their per-level numbers and verdicts. The worker's aggregation, run afterwards,
changes no median and no verdict."""

import json

import numpy as np
import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import seconds_result
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.results.tests.test_import_api import TABLE
from benchhub.testing.payloads import run_payload

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,14.0"


def _post(agent, version: str, level_tps: dict[int, float], seed: int) -> None:
    """A run of three repeats a level, 30 per-second samples each around `level_tps`."""
    rng = np.random.default_rng(seed)
    results = [
        seconds_result(clients, repeat, list(tps * (1 + 0.01 * rng.standard_normal(30))))
        for clients, tps in level_tps.items()
        for repeat in (1, 2, 3)
    ]
    payload = run_payload(
        version=version, host=agent.host_name, clients=tuple(level_tps), repeats=3
    )
    payload.update(results=results, duration_s=30.0)
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content


def _levels(body: dict) -> dict[int, tuple[float, str]]:
    return {
        row["clients"]: (row["versions"][1]["tps"], row["versions"][1]["verdict"])
        for row in body["rows"]
    }


def test_it_compares_two_runs_the_moment_their_uploads_return(agent, anon_client):
    _post(agent, "13.3", {1: 1000.0, 4: 3800.0}, seed=1)
    _post(agent, "14.0", {1: 1100.0, 4: 4180.0}, seed=2)
    assert not Run.objects.filter(aggregated_at__isnull=False).exists()  # no worker ran

    body = anon_client.get(URL).json()
    assert body["missing"] == []
    assert [s["label"] for s in body["series"]] == ["13.3", "14.0"]
    levels = _levels(body)
    assert {clients: verdict for clients, (_, verdict) in levels.items()} == {
        1: "faster",
        4: "faster",
    }
    assert body["verdicts"][0]["summary"].startswith("14.0 against 13.3: faster at")

    for run in Run.objects.all():
        run_aggregate(run_id=run.id)
    after = _levels(anon_client.get(URL).json())
    assert {c: v for c, (_, v) in after.items()} == {c: v for c, (_, v) in levels.items()}
    assert {c: t for c, (t, _) in after.items()} == pytest.approx(
        {c: t for c, (t, _) in levels.items()}
    )


def test_a_summary_table_is_compared_the_moment_it_is_imported(bob, anon_client):
    person = APIClient()
    person.force_authenticate(bob)
    imported = person.post(
        "/api/v1/imports/summary/",
        {
            "host": "paper",
            "builtin": "select-only",
            "table": TABLE,
            "clients_column": 1,
            "columns": [{"column": 2}, {"column": 3}],
        },
        format="json",
    )
    assert imported.status_code == 201, imported.content
    body = anon_client.get("/api/v1/compare/?workload=select-only&host=paper&versions=13,14").json()
    assert body["missing"] == []
    assert [row["versions"][1]["tps"] for row in body["rows"]] == [1582846]
