"""A result's evidence in the upload (POST /api/v1/runs/): stored apart, refused by path."""

import copy
import json
from typing import Any

import pytest

from benchhub.results.models import Result, ResultEvidence, Run
from benchhub.testing.payloads import evidence, run_payload

URL = "/api/v1/runs/"
FOLDED = "postgres;PostgresMain;exec_simple_query 120\npostgres;PostgresMain;XLogFlush 30\n"


def post(client, payload):
    return client.post(URL, data=json.dumps(payload), content_type="application/json")


def with_evidence(index: int, body: Any) -> dict:
    payload = run_payload(clients=(1, 2), repeats=2)
    payload["results"][index]["evidence"] = body
    return payload


def test_it_stores_evidence_one_to_one_with_its_result(agent):
    payload = run_payload(clients=(1, 2), repeats=2)
    payload["results"][0]["evidence"] = evidence(folded=FOLDED)
    payload["results"][3]["evidence"] = evidence(wal_bytes=999)
    response = post(agent.client, payload)
    assert response.status_code == 201, response.content
    stored = ResultEvidence.objects.select_related("result").order_by("result__clients")
    assert [(e.result.clients, e.result.repeat) for e in stored] == [(1, 1), (2, 2)]
    first, last = stored
    assert first.profile["folded"] == FOLDED
    assert first.waits["events"]["Lock:transactionid"] == 0.30
    assert last.stats["wal_bytes"] == 999 and last.profile is None
    assert last.unavailable == {"profile": "perf not installed"}
    assert Result.objects.filter(evidence__isnull=True).count() == 2


def test_it_stores_a_result_without_evidence_or_with_null(agent):
    payload = run_payload(clients=(1,), repeats=2)
    payload["results"][1]["evidence"] = None
    assert post(agent.client, payload).status_code == 201
    assert ResultEvidence.objects.count() == 0


def test_it_keeps_only_the_parts_given(agent):
    body = {"stats": None, "waits": None, "latency": evidence()["latency"], "statements": None}
    response = post(agent.client, with_evidence(1, body))
    assert response.status_code == 201, response.content
    stored = ResultEvidence.objects.get()
    assert stored.latency["p99_ms"] == 4.1
    assert (stored.stats, stored.waits, stored.profile) == (None, None, None)


def bad(path: list, value) -> dict:
    """The full evidence with the value at `path` replaced (or deleted, for `...`)."""
    body = evidence(folded=FOLDED)
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (["colour"], "red", "results[3].evidence.colour"),
        (["waits", "events"], {f"LWLock:e{i}": 0.01 for i in range(51)}, "waits.events"),
        (["waits", "events", "CPU"], 1.5, "waits.events.CPU"),
        (["waits", "events", "CPU"], 0.9, "waits.events"),  # the shares sum past 1
        (["waits", "events"], {"'; DROP TABLE": 0.1}, "waits.events.'; DROP TABLE"),
        (["waits", "samples"], -1, "waits.samples"),
        (["waits", "backend_samples"], 2.5, "waits.backend_samples"),
        (["stats", "database", "blks_hit"], -3, "stats.database.blks_hit"),
        (["stats", "database", "blks_hit"], "many", "stats.database.blks_hit"),
        (["stats", "io"], {f"c{i}": 1 for i in range(101)}, "stats.io"),
        (["stats", "wal_bytes"], 1.5, "stats.wal_bytes"),
        (["stats", "slru"], {}, "stats.slru"),
        (["latency", "p99_ms"], 0.5, "latency.p99_ms"),  # below p90
        (["latency", "sampling_rate"], 0, "latency.sampling_rate"),
        (["latency", "histogram", "counts"], [1, 2], "latency.histogram.edges_ms"),
        (
            ["latency", "histogram"],
            {"edges_ms": list(range(102)), "counts": [1] * 101},
            "latency.histogram.counts",
        ),
        (["latency", "histogram", "counts", 2], -1, "latency.histogram.counts[2]"),
        (["statements"], [evidence()["statements"][0]] * 21, "statements"),
        (["statements", 0, "query"], "x" * 2001, "statements[0].query"),
        (["statements", 0, "rows"], 5, "statements[0].rows"),
        (["statements", 0, "calls"], -2, "statements[0].calls"),
        (["profile", "folded"], "no count on this line\n", "profile.folded"),
        (["profile", "folded"], "a;b 1\n" * 2001, "profile.folded"),
        (["profile", "folded"], "a;" * 600_000 + "b 1", "profile.folded"),
        (["profile", "frequency_hz"], True, "profile.frequency_hz"),
        (["unavailable", "profile"], 7, "unavailable.profile"),
    ],
)
def test_it_refuses_bad_evidence_naming_the_field_and_stores_nothing(agent, path, value, field):
    payload = with_evidence(3, bad(path, value))
    response = post(agent.client, payload)
    assert response.status_code == 400, response.content
    expected = field if field.startswith("results[") else f"results[3].evidence.{field}"
    assert expected in response.json()["fields"], response.json()
    assert not Run.objects.exists() and not ResultEvidence.objects.exists()


def test_it_refuses_evidence_that_is_not_an_object(agent):
    response = post(agent.client, with_evidence(0, ["stats"]))
    assert response.status_code == 400
    assert "results[0].evidence" in response.json()["fields"]


def test_it_accepts_the_bounds_themselves(agent):
    body = evidence(folded="a;b 1\n" * 2000)
    body["waits"]["events"] = {f"LWLock:e{i}": 0.02 for i in range(50)}
    body["statements"] = [{"query": "x" * 2000, "calls": 0, "total_ms": 0, "mean_ms": 0}] * 20
    body["stats"]["io"] = {f"c{i}": i for i in range(100)}
    edges = [float(i) for i in range(101)]
    body["latency"]["histogram"] = {"edges_ms": edges, "counts": [0] * 100}
    response = post(agent.client, with_evidence(2, copy.deepcopy(body)))
    assert response.status_code == 201, response.content
    assert len(ResultEvidence.objects.get().statements or []) == 20


def test_it_reads_the_evidence_back_only_when_asked(agent, anon_client, django_assert_num_queries):
    payload = run_payload(clients=(1, 2), repeats=1)
    payload["results"][1]["evidence"] = evidence(folded=FOLDED)
    assert post(agent.client, payload).status_code == 201
    url = f"/api/v1/runs/{payload['run_uuid']}/results/"

    plain = anon_client.get(url).json()
    # the run, its aggregates (run_get), the results with their evidence joined
    with django_assert_num_queries(3):
        read = anon_client.get(f"{url}?evidence=1").json()

    assert all("evidence" not in row for row in plain)
    assert [row["evidence"] is None for row in read] == [True, False]
    assert read[1]["evidence"]["profile"]["folded"] == FOLDED
    assert read[1]["evidence"]["waits"] == payload["results"][1]["evidence"]["waits"]
