"""Runs of the published experiments' workloads with chosen numbers, for the selector, page and
browser tests. Workloads are defined as the catalog makes them (catalog_entry, params,
presentation, streams); the numbers are small and exact so tests can check every figure."""

from __future__ import annotations

from typing import Any

from benchhub.compare.tests.uploads import upload_results
from benchhub.results.models import Run
from benchhub.testing.payloads import result, stream, telemetry

E5_MODELS = {
    "e5-read-only": {"builtin": "select-only"},
    "e5-tpcb-like": {"builtin": "tpcb-like"},
}
# clients -> threads, as the E5 "pairs" policy ran them.
E5_THREADS = {52: 52, 208: 104}


def e5_workload(entry: str) -> dict[str, Any]:
    return {
        "name": entry,
        "query_mode": "prepared",
        "options": ["-n"],
        "catalog_entry": entry,
        "presentation": "improvement",
        **E5_MODELS[entry],
    }


def e5_upload(agent: Any, *, entry: str, version: str, tps: dict[int, list[float]]) -> Run:
    """An E5 run; the repeats at each level have the given tps."""
    results = [
        result(clients, repeat, value, threads=E5_THREADS.get(clients, clients))
        for clients, values in tps.items()
        for repeat, value in enumerate(values, 1)
    ]
    return upload_results(
        agent,
        version=version,
        results=results,
        workload=e5_workload(entry),
        scale=1000,
        duration_s=120.0,
    )


E2_IDLE = {
    "name": "e2-idle-connections",
    "query_mode": "prepared",
    "streams": [
        {
            "name": "idle",
            "role": "background",
            "scripts": [{"name": "sleep", "body": "select pg_sleep(2000);"}],
            "clients": 9000,
        },
        {"name": "select-only", "role": "measured", "builtin": "select-only"},
    ],
    "combine": "measured",
    "progress_s": 2,
    "catalog_entry": "e2-idle-connections",
    "presentation": "connections",
}
E2_SWEEP = {
    "name": "e2-connection-sweep",
    "builtin": "select-only",
    "query_mode": "prepared",
    "progress_s": 2,
    "catalog_entry": "e2-connection-sweep",
    "presentation": "connections",
}
CLIENT_LIMITS = {"max_connections": 11000, "nofile_soft": 65536, "nofile_hard": 1048576}


def _progress(tps: float, seconds: int = 6) -> list[dict[str, Any]]:
    return [
        {"t": float(t), "tps": tps + t, "latency_ms": 1.0, "stddev_ms": 0.1, "failed": 0}
        for t in range(2, seconds + 1, 2)
    ]


def e2_idle_upload(
    agent: Any, *, version: str, tps: list[float], established: list[int], **extra: Any
) -> Run:
    """128 measured clients while 9000 idle connections are held, one repeat per tps."""
    results = [
        result(
            128,
            repeat,
            value,
            threads=16,
            progress=_progress(value),
            streams=[
                stream("idle", role="background", tps=0.0, clients=9000, established=held),
                stream("select-only", tps=value, clients=128),
            ],
        )
        for repeat, (value, held) in enumerate(zip(tps, established, strict=True), 1)
    ]
    return upload_results(
        agent,
        version=version,
        results=results,
        workload=E2_IDLE,
        scale=200,
        duration_s=30.0,
        client_limits=CLIENT_LIMITS,
        **extra,
    )


def e2_sweep_upload(agent: Any, *, version: str, tps: dict[int, float]) -> Run:
    results = [
        result(clients, 1, value, threads=16, progress=_progress(value))
        for clients, value in tps.items()
    ]
    return upload_results(
        agent,
        version=version,
        results=results,
        workload=E2_SWEEP,
        scale=200,
        duration_s=30.0,
        client_limits=CLIENT_LIMITS,
    )


def e3_workload(key_type: str, prefill_rows: int, **params: Any) -> dict[str, Any]:
    return {
        "name": f"e3-{key_type}-{prefill_rows}",
        "scripts": [{"name": "insert", "body": f"insert into t_{key_type} default values;"}],
        "query_mode": "prepared",
        "options": ["-n"],
        "catalog_entry": "e3-key-insert",
        "params": {
            "key_type": key_type,
            "prefill_rows": prefill_rows,
            "storage": "plain",
            "index": True,
            **params,
        },
        "presentation": "evidence",
    }


def e3_upload(
    agent: Any,
    *,
    version: str,
    workload: dict[str, Any],
    tps: list[float],
    iowait: list[list[float]],
    aborted_iowait: list[float] | None = None,
) -> Run:
    """8 clients; repeat i has tps[i] and per-second iowait samples iowait[i]; with
    `aborted_iowait`, one more repeat aborted with those samples (to be left out)."""
    results = [
        result(
            8,
            repeat,
            value,
            telemetry=telemetry(iowait_pct=samples, util_pct=10.0 * repeat, write_bytes_per_s=2e6),
        )
        for repeat, (value, samples) in enumerate(zip(tps, iowait, strict=True), 1)
    ]
    if aborted_iowait is not None:
        bad = result(8, len(results) + 1, 1.0, telemetry=telemetry(iowait_pct=aborted_iowait))
        bad.update(aborted=True, tps=None, errors=["client 3 aborted"])
        results.append(bad)
    return upload_results(
        agent, version=version, results=results, workload=workload, scale=1, duration_s=60.0
    )


E4 = {
    "name": "e4-write-consume",
    "query_mode": "prepared",
    "options": ["-n", "-r"],
    "streams": [
        {
            "name": "writer",
            "role": "measured",
            "scripts": [{"name": "w", "body": "select ins_batch(1, 1000);"}],
            "rows_per_transaction": 1000,
        },
        {
            "name": "consumer",
            "role": "measured",
            "scripts": [{"name": "c", "body": "select consume_batch(1, 1000);"}],
            "rows_per_transaction": 1000,
        },
    ],
    "progress_s": 5,
    "catalog_entry": "e4-write-consume",
    "presentation": "streams",
}


def e4_upload(
    agent: Any, *, version: str, writer: list[float], consumer: list[float], aborted: bool = False
) -> Run:
    """28 clients per stream; repeat i's writer and consumer tps; with `aborted`, one more
    repeat that aborted (its consumer stream failed) after the writer reached an absurd tps,
    to be left out."""
    results = [
        result(
            28,
            repeat,
            w + c,
            streams=[
                stream("writer", tps=w, clients=28, latency_ms=14.0, rows_per_transaction=1000),
                stream("consumer", tps=c, clients=28, latency_ms=6.0, rows_per_transaction=1000),
            ],
        )
        for repeat, (w, c) in enumerate(zip(writer, consumer, strict=True), 1)
    ]
    if aborted:
        bad = result(
            28,
            len(results) + 1,
            1.0,
            streams=[
                stream("writer", tps=1e9, clients=28, rows_per_transaction=1000),
                stream("consumer", tps=0.0, clients=28, rows_per_transaction=1000, aborted=True),
            ],
        )
        bad.update(aborted=True, tps=None, errors=["consumer: client 2 aborted"])
        results.append(bad)
    return upload_results(
        agent, version=version, results=results, workload=E4, scale=1, duration_s=300.0
    )
