"""Runs with chosen numbers, uploaded as an agent does and aggregated as the worker would."""

import json
from typing import Any

from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import result, run_payload


def upload(
    agent: Any,
    *,
    version: str,
    tps: dict[int, list[float]],
    started_at: str = "2026-11-20T10:00:00Z",
    settings: dict[str, str] | None = None,
    **overrides: Any,
) -> Run:
    """One run of `version` whose repeats at each client level have the given tps."""
    payload = run_payload(
        version=version,
        host=agent.host_name,
        clients=tuple(tps),
        repeats=max(len(v) for v in tps.values()),
        started_at=started_at,
        **overrides,
    )
    payload["results"] = [
        result(c, r, value) for c, values in tps.items() for r, value in enumerate(values, 1)
    ]
    if settings:
        payload["configuration"]["settings"].update(settings)
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.id)
    return run


def upload_results(
    agent: Any, *, version: str, results: list[dict[str, Any]], **overrides: Any
) -> Run:
    """One run of `version` with these results (testing.payloads.result), aggregated."""
    payload = run_payload(
        version=version,
        host=agent.host_name,
        clients=tuple(sorted({r["clients"] for r in results})),
        repeats=max(r["repeat"] for r in results),
        **overrides,
    )
    payload["results"] = results
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.id)
    return run


def seconds_result(clients: int, repeat: int, seconds: list[float]) -> dict[str, Any]:
    """One repeat whose `-P 1` progress lines are `seconds` (tps at t = 1, 2, ...), its overall
    tps their mean, as pgbench prints both."""
    row = result(clients, repeat, sum(seconds) / len(seconds))
    latency = row["latency_avg_ms"]
    row["progress"] = [
        {
            "t": float(t),
            "tps": tps,
            "latency_ms": 1000.0 * clients / tps,
            "stddev_ms": latency / 10,
            "failed": 0,
            "skipped": None,
            "lag_ms": None,
        }
        for t, tps in enumerate(seconds, 1)
    ]
    return row


def upload_seconds(
    agent: Any, *, version: str, seconds: dict[int, list[list[float]]], **overrides: Any
) -> Run:
    """One run of `version`: at each client level, one repeat per list of per-second tps."""
    length = max(len(s) for repeats in seconds.values() for s in repeats)
    results = [
        seconds_result(clients, number, values)
        for clients, repeats in seconds.items()
        for number, values in enumerate(repeats, 1)
    ]
    return upload_results(
        agent, version=version, results=results, duration_s=float(length), **overrides
    )
