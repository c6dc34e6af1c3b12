"""Ingest: realistic uploads through the API served by gunicorn, against the COPY floor.

An upload is what an agent sends after a sweep: 9 client levels x 3 repeats, each with 120
progress samples and per-statement latencies, the host's facts and the server's settings. The
floor writes the same rows (run, results, progress samples) into the same tables with COPY, one
transaction per upload, with none of the API's work (HTTP, JSON, validation, lookups, ORM).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from statistics import median
from typing import Any

from benchhub_runner.payload import PROGRESS_FIELDS

from bench.client import post_json
from bench.figures import Figure, percentile

LEVELS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
REPEATS = 3
SAMPLES = 120
TPCB_STATEMENTS = (
    "\\set aid random(1, 100000 * :scale)",
    "\\set bid random(1, 1 * :scale)",
    "\\set tid random(1, 10 * :scale)",
    "\\set delta random(-5000, 5000)",
    "BEGIN;",
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;",
    "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) "
    "VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
    "END;",
)


@dataclass(frozen=True)
class IngestOptions:
    sequential: int  # uploads one after the other, for the per-upload latency
    clients: int  # concurrent clients for the throughput
    per_client: int  # uploads per concurrent client


def settings_block(count: int = 350) -> tuple[dict[str, str], dict[str, str]]:
    """A SHOW ALL-sized settings dict (PostgreSQL 15 has ~350) and its sources."""
    settings = {f"bench_setting_{i:03d}": str(i * 7) for i in range(count - 4)}
    settings.update(
        shared_buffers="8GB", max_connections="500", port="55001", synchronous_commit="on"
    )
    sources = {name: "default" for name in settings}
    sources.update(
        shared_buffers="configuration file",
        max_connections="configuration file",
        port="command line",
    )
    return settings, sources


def upload_payload(*, host: str, version: str = "16.4") -> dict[str, Any]:
    """One realistic agent upload (docs/runner-api.md) of a tpcb-like sweep."""
    from benchhub.testing.payloads import result, run_payload

    results = []
    for clients in LEVELS:
        for repeat in range(1, REPEATS + 1):
            tps = 900.0 * min(clients, 32) + repeat
            row = result(clients, repeat, tps, samples=SAMPLES)
            latency = row["latency_avg_ms"]
            row["statements"] = [
                {
                    "latency_ms": latency / 8,
                    "failures": 0,
                    "retries": 0,
                    "command": command,
                    "script": 0,
                }
                for command in TPCB_STATEMENTS
            ]
            results.append(row)
    settings, sources = settings_block()
    return run_payload(
        version=version,
        host=host,
        repeats=REPEATS,
        clients=LEVELS,
        configuration={"settings": settings, "sources": sources, "overrides": {}},
        workload={"name": "tpcb-like", "builtin": "tpcb-like", "query_mode": "prepared"},
        duration_s=120.0,
        results=results,
    )


def _timed_parallel(
    clients: int, per_client: int, work: Callable[[int, int], float]
) -> tuple[list[float], float]:
    """Run work(client, i) per_client times on each of `clients` threads; return each call's
    milliseconds and the wall seconds of the whole batch."""
    times: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def loop(client: int) -> None:
        try:
            for i in range(per_client):
                elapsed = work(client, i)
                with lock:
                    times.append(elapsed)
        except Exception as exc:  # noqa: BLE001 - re-raised by the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(c,)) for c in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if errors:
        raise errors[0]
    return times, wall


def _api_upload(server: str, tokens: list[str], hosts: list[str]) -> Callable[[int, int], float]:
    bodies: dict[int, dict[str, Any]] = {c: upload_payload(host=h) for c, h in enumerate(hosts)}

    def work(client: int, _i: int) -> float:
        payload = dict(bodies[client], run_uuid=str(uuid.uuid4()))
        reply = post_json(f"{server}/api/v1/runs/", payload, token=tokens[client])
        if reply.status != 201:
            raise RuntimeError(f"upload answered {reply.status}: {reply.body[:500]!r}")
        return reply.elapsed_ms

    return work


class CopyFloor:
    """The same rows an upload stores, COPYed into the same tables in one transaction."""

    def __init__(self, *, template_run_id: int, database_url: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.url = database_url
        with psycopg.connect(database_url) as conn:
            run = conn.execute(
                "SELECT host_id, host_facts_id, build_id, config_id, workload_id, settings, "
                "setting_sources, comparability_key FROM results_run WHERE id = %s",
                [template_run_id],
            ).fetchone()
        if run is None:
            raise RuntimeError(f"no run {template_run_id} to copy the floor's rows from")
        self.run = run
        self.payload = upload_payload(host="copy-floor")

    def connect(self):
        return self.psycopg.connect(self.url)

    def write(self, conn) -> float:
        """COPY one upload's rows; returns milliseconds, commit included."""
        started = time.perf_counter()
        host, facts, build, config, workload, settings, sources, key = self.run
        p = self.payload
        with conn.transaction(), conn.cursor() as cur:
            run_id = cur.execute(
                "SELECT nextval(pg_get_serial_sequence('results_run', 'id'))"
            ).fetchone()[0]
            now = datetime.now(UTC)
            with cur.copy(
                "COPY results_run (id, uuid, settings, setting_sources, config_overrides, scale,"
                " clients, duration_s, repeats, started_at, finished_at, created_at, status,"
                " source, pgbench_version, server_version, init_output, init_timings,"
                " comparability_key, payload_digest, host_id, host_facts_id, build_id,"
                " config_id, workload_id, notes, baseline, invalid, client_limits,"
                " level_durations, level_sequence, stop_reason, stop_stage, import_text)"
                " FROM STDIN"
            ) as copy:
                copy.write_row(
                    (run_id, uuid.uuid4(), json.dumps(settings), json.dumps(sources), "{}",
                     p["scale"], p["clients"], p["duration_s"], p["repeats"], p["started_at"],
                     p["finished_at"], now, "completed", "agent", p["pgbench_version"],
                     p["server_version"], p["init"]["output"], json.dumps(p["init"]["timings"]),
                     key, "0" * 64, host, facts, build, config, workload, "", False, False, "{}",
                     "{}", "[]", "", "", "")
                )  # fmt: skip
            ids = [
                row[0]
                for row in cur.execute(
                    "SELECT nextval(pg_get_serial_sequence('results_result', 'id'))"
                    " FROM generate_series(1, %s)",
                    [len(p["results"])],
                )
            ]
            self._copy_results(cur, run_id, ids, key)
            self._copy_progress(cur, ids)
        return (time.perf_counter() - started) * 1000

    def _copy_results(self, cur, run_id: int, ids: list[int], key: str) -> None:
        with cur.copy(
            "COPY results_result (id, run_id, clients, repeat, threads, tps, transactions,"
            " failed_transactions, latency_avg_ms, latency_stddev_ms,"
            " initial_connection_time_ms, aborted, errors, statements, raw_output,"
            " comparability_key, telemetry, steady_seconds, steady_block) FROM STDIN"
        ) as copy:
            for result_id, r in zip(ids, self.payload["results"], strict=True):
                copy.write_row(
                    (result_id, run_id, r["clients"], r["repeat"], r["threads"], r["tps"],
                     r["transactions"], r["failed_transactions"], r["latency_avg_ms"],
                     r["latency_stddev_ms"], r["initial_connection_time_ms"], False, [],
                     json.dumps(r["statements"]), r["raw_output"], key, "[]", 0, 0)
                )  # fmt: skip

    def _copy_progress(self, cur, ids: list[int]) -> None:
        columns = ", ".join(("result_id", *PROGRESS_FIELDS))
        with cur.copy(f"COPY results_progresssample ({columns}) FROM STDIN") as copy:
            for result_id, r in zip(ids, self.payload["results"], strict=True):
                for s in r["progress"]:
                    copy.write_row((result_id, *(s[name] for name in PROGRESS_FIELDS)))


class _CopyWork:
    """The floor's work for `clients` clients, each on its own connection (close them after)."""

    def __init__(self, floor: CopyFloor, clients: int) -> None:
        self.floor = floor
        self.connections = [floor.connect() for _ in range(clients)]

    def __call__(self, client: int, _i: int) -> float:
        return self.floor.write(self.connections[client])

    def close(self) -> None:
        for connection in self.connections:
            connection.close()


def ingest_bench(*, server: str, database_url: str, options: IngestOptions) -> list[Figure]:
    """Upload through the API, then COPY the same rows; figures with targets and floors."""
    from benchhub.hosts.services import runner_token_create
    from benchhub.results.models import Run

    suffix = uuid.uuid4().hex[:6]
    hosts = [f"ingest-{suffix}-{c}" for c in range(max(options.clients, 1))]
    tokens = [runner_token_create(host_name=h)[1] for h in hosts]
    api = _api_upload(server, tokens, hosts)
    api(0, 0)  # warm-up: creates the host, build, configuration and workload rows
    sequential, _ = _timed_parallel(1, options.sequential, api)
    concurrent, wall = _timed_parallel(options.clients, options.per_client, api)
    api_rate = options.clients * options.per_client / wall

    template = Run.objects.filter(host__name=hosts[0]).order_by("id").first()
    if template is None:
        raise RuntimeError("the warm-up upload stored no run")
    floor = CopyFloor(template_run_id=template.pk, database_url=database_url)
    one = _CopyWork(floor, 1)
    one(0, 0)
    copy_sequential, _ = _timed_parallel(1, options.sequential, one)
    one.close()
    many = _CopyWork(floor, options.clients)
    _, copy_wall = _timed_parallel(options.clients, options.per_client, many)
    many.close()
    copy_rate = options.clients * options.per_client / copy_wall

    api_median, copy_median = median(sequential), median(copy_sequential)
    rows = len(LEVELS) * REPEATS * (SAMPLES + 1) + 1
    note = f"{rows} rows per upload; {options.clients} concurrent clients"
    return [
        Figure("ingest", "upload median", api_median, "ms", floor=copy_median, note=note),
        Figure(
            "ingest",
            "upload p95",
            percentile(sequential, 95),
            "ms",
            floor=percentile(copy_sequential, 95),
        ),
        Figure(
            "ingest",
            "upload median / COPY median",
            api_median / copy_median,
            "x",
            op="<=",
            target=3.0,
            floor=1.0,
        ),
        Figure(
            "ingest",
            f"uploads/s, {options.clients} clients",
            api_rate,
            "uploads/s",
            op=">=",
            target=100.0,
            floor=copy_rate,
            note="floor: COPY of the same rows with as many connections",
        ),
        Figure(
            "ingest",
            "COPY uploads/s / API uploads/s",
            copy_rate / api_rate,
            "x",
            op="<=",
            target=3.0,
            floor=1.0,
        ),
        Figure(
            "ingest",
            f"upload p95 under load, {options.clients} clients",
            percentile(concurrent, 95),
            "ms",
        ),
    ]
