"""A realistic run upload, as an agent sends it (docs/runner-api.md), to vary per test."""

import copy
import uuid
from typing import Any

SELECT_ONLY_OUTPUT = """pgbench (15.19 (Debian 15.19-0+deb12u1))
transaction type: <builtin: select only>
scaling factor: 1
query mode: prepared
number of clients: {clients}
number of threads: {clients}
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: {transactions}
number of failed transactions: 0 (0.000%)
latency average = {latency:.3f} ms
initial connection time = 2.114 ms
tps = {tps:.6f} (without initial connection time)
"""


def host_facts(name: str = "bench-01", memory_bytes: int = 25_769_803_776) -> dict[str, Any]:
    return {
        "name": name,
        "facts": {
            "cpu_model": "Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz",
            "sockets": 2,
            "cores": 20,
            "threads": 40,
            "numa_nodes": 2,
            "memory_bytes": memory_bytes,
            "storage": "nvme0n1 Samsung SSD 980 PRO 1TB",
            "filesystem": "xfs",
            "kernel": "6.1.0-26-amd64",
            "os": "Debian GNU/Linux 12",
            "virtualization": "none",
        },
        "lscpu": "Architecture: x86_64\nCPU(s): 40\nSocket(s): 2\n",
        "sysctl": {"vm.swappiness": "0", "kernel.sem": "4096 2147483647 2147483646 512"},
    }


def result(
    clients: int,
    repeat: int,
    tps: float,
    *,
    samples: int = 2,
    threads: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One level's repeat at `tps`; `extra` adds or replaces keys (streams, telemetry, ...)."""
    latency = 1000.0 * clients / tps
    transactions = int(tps * 2)
    return {
        "clients": clients,
        "repeat": repeat,
        "threads": threads or clients,
        "tps": tps,
        "transactions": transactions,
        "failed_transactions": 0,
        "latency_avg_ms": latency,
        "latency_stddev_ms": latency / 10,
        "initial_connection_time_ms": 2.114,
        "aborted": False,
        "errors": [],
        "statements": [
            {
                "latency_ms": latency * 0.9,
                "failures": 0,
                "retries": 0,
                "command": "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
                "script": 0,
            }
        ],
        "progress": [
            {
                "t": float(t),
                "tps": tps + t,
                "latency_ms": latency,
                "stddev_ms": latency / 10,
                "failed": 0,
                "skipped": None,
                "lag_ms": None,
            }
            for t in range(1, samples + 1)
        ],
        "raw_output": SELECT_ONLY_OUTPUT.format(
            clients=clients, transactions=transactions, latency=latency, tps=tps
        ),
        **extra,
    }


def stream(
    name: str,
    *,
    tps: float,
    clients: int,
    role: str = "measured",
    latency_ms: float = 1.0,
    rows_per_transaction: int | None = None,
    established: int | None = None,
    aborted: bool = False,
) -> dict[str, Any]:
    """One stream of a multi-stream result, as the agent reports it."""
    return {
        "name": name,
        "role": role,
        "processes": 1,
        "clients": clients,
        "threads": clients,
        "tps": tps,
        "transactions": int(tps * 2),
        "failed_transactions": 0,
        "latency_avg_ms": latency_ms,
        "latency_stddev_ms": latency_ms / 10,
        "rows_per_transaction": rows_per_transaction,
        "rows_per_s": tps * rows_per_transaction if rows_per_transaction else None,
        "established": established,
        "aborted": aborted,
        "errors": [],
        "raw_output": "",
    }


def telemetry(
    *, iowait_pct: list[float], util_pct: float = 50.0, write_bytes_per_s: float = 1e6
) -> list[dict[str, Any]]:
    """Per-second OS samples, one per value of `iowait_pct`."""
    return [
        {
            "t": float(t),
            "cpu_user_pct": 20.0,
            "cpu_system_pct": 5.0,
            "cpu_iowait_pct": iowait,
            "cpu_idle_pct": max(75.0 - iowait, 0.0),
            "disk_util_pct": util_pct,
            "disk_write_bytes_per_s": write_bytes_per_s,
            "disk_device": "nvme0n1",
        }
        for t, iowait in enumerate(iowait_pct, 1)
    ]


def evidence(
    *,
    transactions: int = 1000,
    wal_bytes: int = 123_456,
    waits: dict[str, float] | None = None,
    p50_ms: float = 1.2,
    p99_ms: float = 4.1,
    query: str = "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
    folded: str | None = None,
) -> dict[str, Any]:
    """A result's evidence as the agent sends it (docs/runner-api.md, "Evidence"); `folded`
    adds a perf profile."""
    body: dict[str, Any] = {
        "stats": {
            "database": {
                "xact_commit": transactions,
                "xact_rollback": 0,
                "blks_read": transactions // 10,
                "blks_hit": transactions * 12,
                "temp_bytes": 0,
                "deadlocks": 0,
            },
            "bgwriter": {"buffers_clean": 3, "maxwritten_clean": 0},
            "wal": {"wal_records": transactions * 3, "wal_fpi": 7, "wal_write_time": 1.5},
            "wal_bytes": wal_bytes,
            "checkpoints": 1,
        },
        "waits": {
            "interval_ms": 200,
            "samples": 50,
            "backend_samples": 400,
            "events": waits or {"CPU": 0.62, "Lock:transactionid": 0.30, "LWLock:WALWrite": 0.08},
        },
        "latency": {
            "sampling_rate": 0.1,
            "transactions": transactions // 10,
            "p50_ms": p50_ms,
            "p90_ms": p50_ms * 1.5,
            "p99_ms": p99_ms,
            "p999_ms": p99_ms * 2,
            "max_ms": p99_ms * 5,
            "histogram": {"edges_ms": [0.0, 0.5, 1.0, 2.0, 5.0], "counts": [10, 40, 35, 15]},
        },
        "statements": [{"query": query, "calls": transactions, "total_ms": 50.0, "mean_ms": 0.05}],
        "unavailable": {},
    }
    if folded is not None:
        body["profile"] = {"tool": "perf", "frequency_hz": 99, "seconds": 10.0, "folded": folded}
    else:
        body["unavailable"]["profile"] = "perf not installed"
    return body


def run_payload(
    *,
    version: str = "14.23",
    host: str = "bench-01",
    repeats: int = 2,
    clients: tuple[int, ...] = (1, 2),
    **overrides: Any,
) -> dict[str, Any]:
    """An upload of a select-only sweep; `overrides` replace top-level keys."""
    results = [result(c, r, 1000.0 * c + 10 * r) for c in clients for r in range(1, repeats + 1)]
    payload = {
        "run_uuid": str(uuid.uuid4()),
        "host": host_facts(host),
        "build": {"version": version, "origin": "prebuilt"},
        "configuration": {
            "settings": {
                "shared_buffers": "128MB",
                "max_connections": "100",
                "port": "55001",
                "data_directory": "/srv/bench/run-1/data",
                "synchronous_commit": "on",
            },
            "sources": {
                "shared_buffers": "configuration file",
                "max_connections": "configuration file",
                "port": "command line",
                "data_directory": "override",
                "synchronous_commit": "default",
            },
            "overrides": {},
        },
        "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
        "scale": 1,
        "clients": list(clients),
        "duration_s": 2.0,
        "repeats": repeats,
        "started_at": "2026-11-20T10:00:00Z",
        "finished_at": "2026-11-20T10:05:00Z",
        "status": "completed",
        "pgbench_version": "15.19",
        "server_version": version,
        "init": {"output": "done in 0.42 s", "timings": {"generate": 0.21, "vacuum": 0.1}},
        "results": results,
    }
    payload.update(copy.deepcopy(overrides))
    return payload
