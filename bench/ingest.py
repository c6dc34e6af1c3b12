"""Ingest: realistic uploads through the API served by gunicorn, against the COPY floor.

An upload is what an agent sends after a sweep: 9 client levels x 3 repeats, each with 120
progress samples and per-statement latencies, the host's facts and the server's settings. The
floor writes the same rows (run, results, progress samples) into the same tables with COPY, one
transaction per upload, with none of the API's work (HTTP, JSON, validation, lookups, ORM).

Upload and floor are measured in repeated rounds, interleaved so that the machine's load of the
moment weighs on both alike: in each round `pairs` sequential uploads and COPYs in ABAB order
(BABA in every other round), then a batch of concurrent uploads and one of concurrent COPYs
(the order alternating between rounds). Each round gives one median per side and one rate per
side; their ratios get the compare pages' interval (bench.intervals).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchhub_runner.results.payload import PROGRESS_FIELDS

from bench.client import request
from bench.figures import Figure
from bench.intervals import mean_interval, percentile_interval, ratio_interval

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


# The targets (docs/performance.md).
TARGET_MEDIAN_RATIO = 1.5
TARGET_MEDIAN_TEXT = "<= 1.5 x (upload median within 1.5x of the COPY floor)"
TARGET_RATE_SHARE = 0.8
TARGET_RATE_TEXT = ">= 0.8 (uploads/s at least 0.8 of the floor's)"


@dataclass(frozen=True)
class IngestOptions:
    rounds: int = 12  # interleaved rounds of upload and floor
    pairs: int = 6  # per round: sequential upload/COPY pairs, ABAB, for the per-upload latency
    clients: int = 4  # concurrent clients for the throughput
    per_client: int = 5  # per round: uploads (and COPYs) per concurrent client
    # How the floor writes the progress arrays: "literal", as the upload does (the cheapest
    # COPY of these rows), or "psycopg", psycopg's list dumper (the floor of earlier figures).
    floor_arrays: str = "literal"

    @classmethod
    def quick(cls) -> IngestOptions:
        return cls(rounds=3, pairs=2, clients=2, per_client=2)


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


# Stands for the run's UUID in a client's encoded body; replaced by a new one for each upload.
UUID_MARK = "00000000-0000-4000-8000-000000000000"


def _api_upload(server: str, tokens: list[str], hosts: list[str]) -> Callable[[int, int], float]:
    # An agent encodes its upload on its own host. Here client and server share two CPUs, so
    # each client's body is encoded once and each upload gets its own UUID in those bytes: the
    # figures are the server's ingest, not the client's JSON encoding (about 8 ms of CPU an
    # upload in the bench's process, taken from the server under measurement).
    bodies = {
        c: json.dumps(dict(upload_payload(host=h), run_uuid=UUID_MARK)).encode()
        for c, h in enumerate(hosts)
    }

    def work(client: int, _i: int) -> float:
        body = bodies[client].replace(UUID_MARK.encode(), str(uuid.uuid4()).encode(), 1)
        reply = request(f"{server}/api/v1/runs/", method="POST", body=body, token=tokens[client])
        if reply.status != 201:
            raise RuntimeError(f"upload answered {reply.status}: {reply.body[:500]!r}")
        return reply.elapsed_ms

    return work


class CopyFloor:
    """The same rows an upload stores, COPYed into the same tables in one transaction."""

    def __init__(self, *, template_run_id: int, database_url: str, arrays: str) -> None:
        import psycopg

        from benchhub.results.copying import array_literal

        self.psycopg = psycopg
        self.encode: Callable[[list[Any]], Any] = array_literal if arrays == "literal" else list
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
                " level_durations, level_sequence, stop_reason, stop_stage,"
                " settings_translated, settings_not_applied, tablespaces)"
                " FROM STDIN"
            ) as copy:
                copy.write_row(
                    (run_id, uuid.uuid4(), json.dumps(settings), json.dumps(sources), "{}",
                     p["scale"], p["clients"], p["duration_s"], p["repeats"], p["started_at"],
                     p["finished_at"], now, "completed", "agent", p["pgbench_version"],
                     p["server_version"], p["init"]["output"], json.dumps(p["init"]["timings"]),
                     key, "0" * 64, host, facts, build, config, workload, "", False, False, "{}",
                     "{}", "[]", "", "", "{}", "{}", "[]")
                )  # fmt: skip
            ids = [
                row[0]
                for row in cur.execute(
                    "SELECT nextval(pg_get_serial_sequence('results_result', 'id'))"
                    " FROM generate_series(1, %s)",
                    [len(p["results"])],
                )
            ]
            self._copy_results(cur, run_id, ids, key, now)
            self._copy_progress(cur, ids, now)
        return (time.perf_counter() - started) * 1000

    def _copy_results(self, cur, run_id: int, ids: list[int], key: str,
                      created_at: datetime) -> None:  # fmt: skip
        with cur.copy(
            "COPY results_result (id, run_id, clients, repeat, threads, tps, transactions,"
            " failed_transactions, latency_avg_ms, latency_stddev_ms,"
            " initial_connection_time_ms, aborted, errors, statements,"
            " comparability_key, steady_seconds, steady_block) FROM STDIN"
        ) as copy:
            for result_id, r in zip(ids, self.payload["results"], strict=True):
                copy.write_row(
                    (result_id, run_id, r["clients"], r["repeat"], r["threads"], r["tps"],
                     r["transactions"], r["failed_transactions"], r["latency_avg_ms"],
                     r["latency_stddev_ms"], r["initial_connection_time_ms"], False, [],
                     json.dumps(r["statements"]), key, 0, 0)
                )  # fmt: skip
        # The raw outputs in their monthly table, as the upload writes them.
        with cur.copy("COPY results_resultoutput (result_id, created_at, text) FROM STDIN") as copy:
            for result_id, r in zip(ids, self.payload["results"], strict=True):
                if r["raw_output"]:
                    copy.write_row((result_id, created_at, r["raw_output"]))
        # The OS telemetry in its monthly table, a row per result that has any, as the upload
        # writes it (results.copying.details_copy): no COPY when no result has any.
        results = zip(ids, self.payload["results"], strict=True)
        telemetry = [(result_id, r.get("telemetry") or []) for result_id, r in results]
        if any(samples for _, samples in telemetry):
            with cur.copy(
                "COPY results_resulttelemetry (result_id, created_at, samples) FROM STDIN"
            ) as copy:
                for result_id, samples in telemetry:
                    if samples:
                        copy.write_row((result_id, created_at, json.dumps(samples)))

    def _copy_progress(self, cur, ids: list[int], created_at: datetime) -> None:
        """A row of arrays per result, as the upload stores them (results.models.ProgressSeries)."""
        columns = ", ".join(("result_id", "created_at", *PROGRESS_FIELDS))
        with cur.copy(f"COPY results_progressseries ({columns}) FROM STDIN") as copy:
            for result_id, r in zip(ids, self.payload["results"], strict=True):
                arrays = [[s[name] for s in r["progress"]] for name in PROGRESS_FIELDS]
                copy.write_row((result_id, created_at, *map(self.encode, arrays)))


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


@dataclass
class Rounds:
    """Per round: sequential milliseconds and concurrent (rate, milliseconds), per side."""

    api_ms: list[list[float]]
    copy_ms: list[list[float]]
    api_rates: list[float]
    copy_rates: list[float]
    api_loaded_ms: list[list[float]]


def _measure_rounds(api, one: _CopyWork, many: _CopyWork, options: IngestOptions) -> Rounds:
    done = Rounds([], [], [], [], [])
    batch = options.clients * options.per_client
    for number in range(options.rounds):
        api_ms, copy_ms = [], []
        for i in range(options.pairs):
            first_api = (number + i) % 2 == 0  # ABAB, then BABA in the next round
            for side in ("api", "copy") if first_api else ("copy", "api"):
                if side == "api":
                    api_ms.append(api(0, i))
                else:
                    copy_ms.append(one(0, i))
        done.api_ms.append(api_ms)
        done.copy_ms.append(copy_ms)
        sides = ("api", "copy") if number % 2 == 0 else ("copy", "api")
        for side in sides:
            work = api if side == "api" else many
            times, wall = _timed_parallel(options.clients, options.per_client, work)
            if side == "api":
                done.api_rates.append(batch / wall)
                done.api_loaded_ms.append(times)
            else:
                done.copy_rates.append(batch / wall)
    return done


def ingest_bench(*, server: str, database_url: str, options: IngestOptions) -> list[Figure]:
    """Uploads through the API and COPYs of the same rows in interleaved rounds; figures with
    their intervals, targets and floors."""
    from benchhub.hosts.services import runner_token_create
    from benchhub.results.models import Run

    suffix = uuid.uuid4().hex[:6]
    hosts = [f"ingest-{suffix}-{c}" for c in range(max(options.clients, 1))]
    tokens = [runner_token_create(host_name=h)[1] for h in hosts]
    api = _api_upload(server, tokens, hosts)
    for client in range(len(hosts)):
        api(client, 0)  # warm-up: creates the host, build, configuration and workload rows
    template = Run.objects.filter(host__name=hosts[0]).order_by("id").first()
    if template is None:
        raise RuntimeError("the warm-up upload stored no run")
    floor = CopyFloor(
        template_run_id=template.pk, database_url=database_url, arrays=options.floor_arrays
    )
    one, many = _CopyWork(floor, 1), _CopyWork(floor, options.clients)
    try:
        one(0, 0)
        rounds = _measure_rounds(api, one, many, options)
    finally:
        one.close()
        many.close()
    return _figures(rounds, options)


def _figures(rounds: Rounds, options: IngestOptions) -> list[Figure]:
    from statistics import median

    api_median = percentile_interval(rounds=rounds.api_ms, q=50)
    copy_median = percentile_interval(rounds=rounds.copy_ms, q=50)
    medians = ratio_interval(floor=[median(r) for r in rounds.copy_ms],
                             bench=[median(r) for r in rounds.api_ms])  # fmt: skip
    api_rate = mean_interval(values=rounds.api_rates)
    copy_rate = mean_interval(values=rounds.copy_rates)
    rows = len(LEVELS) * REPEATS * (SAMPLES + 1) + 1
    shape = (f"{rows} rows per upload; {options.rounds} rounds of {options.pairs} sequential "
             f"pairs and {options.clients} clients x {options.per_client}; the floor's arrays: "
             f"{options.floor_arrays}")  # fmt: skip
    clients = f"{options.clients} clients"
    return [
        Figure.measured("ingest", "upload median", api_median, "ms", floor=copy_median.value,
                        note=shape),
        Figure.measured("ingest", "upload p95", percentile_interval(rounds=rounds.api_ms, q=95),
                        "ms", floor=percentile_interval(rounds=rounds.copy_ms, q=95).value),
        Figure.measured("ingest", "upload median / COPY median", medians, "x", op="<=",
                        target=TARGET_MEDIAN_RATIO, target_text=TARGET_MEDIAN_TEXT, floor=1.0,
                        note="per round: median of its uploads / median of its COPYs"),
        Figure.measured("ingest", f"uploads/s, {clients}", api_rate, "uploads/s",
                        floor=copy_rate.value,
                        note="floor: COPY of the same rows with as many connections"),
        Figure.measured("ingest", f"uploads/s / COPY uploads/s, {clients}",
                        ratio_interval(floor=rounds.copy_rates, bench=rounds.api_rates), "x",
                        op=">=", target=TARGET_RATE_SHARE, target_text=TARGET_RATE_TEXT,
                        floor=1.0),
        Figure.measured("ingest", f"upload p95 under load, {clients}",
                        percentile_interval(rounds=rounds.api_loaded_ms, q=95), "ms"),
    ]  # fmt: skip
