"""Runs with chosen numbers, uploaded as an agent does and aggregated as the worker would."""

import json
from typing import Any

from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import evidence, result, run_payload, telemetry


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


def evidence_result(
    clients: int,
    repeat: int,
    tps: float,
    *,
    waits: dict[str, float],
    folded: str | None,
    p99: float,
) -> dict[str, Any]:
    """One repeat carrying evidence (testing.payloads.evidence) and OS telemetry: 2 seconds of
    1% and 3% iowait, 4 context switches per transaction, the client at 35% of a core."""
    body = evidence(transactions=int(tps * 2), waits=waits, p99_ms=p99, folded=folded)
    samples = telemetry(iowait_pct=[1.0, 3.0])
    for sample in samples:
        sample.update(ctx_switches_per_s=tps * 4, client_cpu_pct=35.0)
    return result(clients, repeat, tps, evidence=body, telemetry=samples, client_bound=False)


def upload_evidence(
    agent: Any,
    *,
    version: str,
    tps: dict[int, list[float]],
    waits: dict[str, float],
    folded: str,
    p99: float,
    **overrides: Any,
) -> Run:
    """One run of `version` whose every repeat carries evidence, the profile on repeat 1."""
    results = [
        evidence_result(
            clients, repeat, value, waits=waits, folded=folded if repeat == 1 else None, p99=p99
        )
        for clients, values in tps.items()
        for repeat, value in enumerate(values, 1)
    ]
    return upload_results(agent, version=version, results=results, **overrides)
