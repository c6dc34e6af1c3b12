"""Years of history, bulk-generated in SQL: runs, results, aggregates, progress samples, OS
telemetry, raw outputs, imported texts and detected regressions: a performance farm's
repository.

A run is a sweep of 9 client levels x 3 repeats (27 results) on one of `hosts` hosts (two
hardware generations), of one of `workloads` workloads (the three pgbench builtins, two custom
ones, then farm-05, farm-06, ... run as select-only), with one of 30 versions
(12.0 .. 17.4), one of two configurations per host, started at some moment in the last five
years, evenly spaced. Every run is aggregated (9 LevelAggregate rows). The newest
PROGRESS_SHARE of the results carry 120 progress samples, 120 seconds of OS telemetry and a raw
output each, as agent uploads do; older history is mostly imported runs, each with the text it
was read from. The detail tables are written in their monthly partitions, created for every
month of the history as beat creates them as time passes. One run in REGRESSION_EVERY has a
detected change (a regression or an improvement at 8 clients), for the regressions page.

The generation is repeatable: there is no randomness, every choice is a function of the run's
number i (multiplicative hashing, so every series is populated), and the identities restart at
1, so the same size and shape give the same rows, dated back from the moment of generation.
The rows are written by INSERT ... SELECT generate_series, never through the ORM, and are reused
by the next run when the marker table says the same size and shape were generated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from benchhub.regressions.detection import CONFIRM

LEVELS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
REPEATS = 3
# A performance farm at 10M results (the scale of the targets), and the smaller shape of the
# earlier figures, whose series are long enough at 100k and 1M results (at 1M the farm's would
# hold ~5 runs each).
FARM_HOSTS, FARM_WORKLOADS = 200, 40
HOSTS, WORKLOADS = 24, 5
FARM_FROM_RESULTS = 10_000_000
NAMED_WORKLOADS = ("select-only", "tpcb-like", "simple-update", "e1-pk-lookup", "e1-insert")
VERSIONS = tuple(f"{major}.{minor}" for major in range(12, 18) for minor in range(5))
PROGRESS_SHARE = 0.02
PROGRESS_SAMPLES = 120
YEARS = 5
REGRESSION_EVERY = 200
MARKER = "bench_history_shape"
# The generated hosts' names: hist-00, hist-01, ... (the compare section measures among them).
HOST_PREFIX = "hist-"


@dataclass(frozen=True)
class HistoryShape:
    results: int
    runs: int
    progress_samples: int
    seconds: float  # spent generating; 0 when reused
    hosts: int
    workloads: int


def default_shape(results: int) -> tuple[int, int]:
    """(hosts, workloads) for a history of `results`: the farm from 10M results on."""
    if results >= FARM_FROM_RESULTS:
        return FARM_HOSTS, FARM_WORKLOADS
    return HOSTS, WORKLOADS


def workload_names(count: int) -> list[str]:
    """The first `count` workloads: the five named ones, then farm-05, farm-06, ..."""
    extra = [f"farm-{n:02d}" for n in range(len(NAMED_WORKLOADS), count)]
    return list(NAMED_WORKLOADS[:count]) + extra


def _dimensions(*, hosts: int, workloads: int) -> dict[str, list[int]]:
    """Hosts (with facts), builds, configurations and workloads, through the services."""
    from benchhub.builds.services import build_get_or_create
    from benchhub.configs.services import config_get_or_create
    from benchhub.hosts.services import host_facts_record, host_get_or_create
    from benchhub.testing.payloads import host_facts
    from benchhub.workloads.services import workload_get_or_create

    host_ids, facts, configs = [], [], []
    for n in range(hosts):
        host = host_get_or_create(name=f"{HOST_PREFIX}{n:02d}")
        spec = host_facts(host.name, memory_bytes=(64 if n % 2 else 128) * 2**30)
        facts.append(host_facts_record(host=host, facts=spec["facts"]).pk)
        host_ids.append(host.pk)
    for n in range(hosts * 2):
        settings = {"shared_buffers": f"{2 ** (n % 6 + 1)}GB", "max_connections": "500"}
        configs.append(config_get_or_create(settings=settings, sources={}).pk)
    builds = [build_get_or_create(version=v, origin="prebuilt").pk for v in VERSIONS]
    workload_ids = [
        workload_get_or_create(name=w, builtin=_builtin(w)).pk for w in workload_names(workloads)
    ]
    return {"hosts": host_ids, "facts": facts, "configs": configs, "builds": builds,
            "workloads": workload_ids}  # fmt: skip


def _builtin(name: str) -> str:
    return name if name in ("select-only", "tpcb-like", "simple-update") else "select-only"


def marker_shape() -> tuple[int, int, int] | None:
    """(results, hosts, workloads) of the history in the database, None when none was made."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {MARKER} (results bigint, runs bigint, hosts int, "
            "workloads int)"
        )
        cursor.execute(f"SELECT results, hosts, workloads FROM {MARKER}")
        row = cursor.fetchone()
    return (row[0], row[1], row[2]) if row else None


def history_ensure(*, results: int, hosts: int = HOSTS, workloads: int = WORKLOADS) -> HistoryShape:
    """The repository holds `results` generated results (rounded to whole runs) on `hosts`
    hosts and `workloads` workloads: reused when the marker says so, otherwise every run is
    truncated and the history generated anew (identities restarted: the same rows each time)."""
    from benchhub.results.partitions import partitions_ensure

    runs = max(results // (len(LEVELS) * REPEATS), 1)
    with_progress = int(runs * len(LEVELS) * REPEATS * PROGRESS_SHARE)
    if hosts < 1 or workloads < 1:
        raise ValueError("a history needs at least one host and one workload")
    shape = HistoryShape(runs * len(LEVELS) * REPEATS, runs, with_progress * PROGRESS_SAMPLES, 0,
                         hosts, workloads)  # fmt: skip
    if marker_shape() == (shape.results, hosts, workloads):
        return shape
    started = time.monotonic()
    dims = _dimensions(hosts=hosts, workloads=workloads)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE results_run, results_result, results_progressseries, "
            "results_resultevidence, results_resultoutput, results_streamoutput, "
            "results_runimporttext, results_resulttelemetry, results_levelaggregate, "
            "results_streamresult, regressions_regression RESTART IDENTITY CASCADE"
        )
        # Every month of the history gets its partitions, as beat creates them as time passes.
        partitions_ensure(first=timezone.now() - timedelta(days=YEARS * 365 + 1))
        for statement in _statements(runs=runs, dims=dims, with_progress=with_progress):
            cursor.execute(statement)
        cursor.execute(f"DELETE FROM {MARKER}")
        cursor.execute(
            f"INSERT INTO {MARKER} VALUES (%s, %s, %s, %s)",
            [shape.results, runs, hosts, workloads],
        )
    # VACUUM too, not only ANALYZE: otherwise autovacuum visits the fresh tables while the
    # first requests are measured (a 200 ms p95 outlier at 100k results).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    return HistoryShape(shape.results, runs, shape.progress_samples, time.monotonic() - started,
                        hosts, workloads)  # fmt: skip


def _array(values: list[int]) -> str:
    return "ARRAY[" + ",".join(str(int(v)) for v in values) + "]::bigint[]"


def _statements(*, runs: int, dims: dict[str, list[int]], with_progress: int) -> list[str]:
    """Runs, then results, aggregates and progress derived from them; i = 1..runs, the newest
    last. Choices are spread by multiplicative hashing of i, so every series is populated."""
    hosts, facts = _array(dims["hosts"]), _array(dims["facts"])
    configs, builds = _array(dims["configs"]), _array(dims["builds"])
    workloads = _array(dims["workloads"])
    host_count, workload_count = len(dims["hosts"]), len(dims["workloads"])
    span_s = YEARS * 365 * 86400
    levels = "ARRAY[" + ",".join(map(str, LEVELS)) + "]"
    run = f"""
        INSERT INTO results_run (uuid, settings, setting_sources, config_overrides, scale,
            clients, duration_s, repeats, started_at, finished_at, created_at, status, source,
            pgbench_version, server_version, init_output, init_timings, comparability_key,
            payload_digest, aggregated_at, build_id, config_id, host_id, host_facts_id,
            workload_id, notes, baseline, invalid, client_limits, level_durations,
            level_sequence, stop_reason, stop_stage, settings_translated,
            settings_not_applied, tablespaces)
        SELECT md5('run' || i)::uuid, '{{}}', '{{}}', '{{}}', 100, {levels}, 120, {REPEATS},
            t, t + interval '30 minutes', t + interval '31 minutes', 'completed',
            CASE WHEN i > {runs} * 0.9 THEN 'agent' ELSE 'import' END,
            '16.4', bb.version, '', '{{}}', md5(h || '/' || c || '/' || w) || md5(w || '/' || h),
            repeat('0', 64), t + interval '32 minutes', b, c, h, f, w, '', false, i % 97 = 0,
            '{{}}', '{{}}', '[]', '', '', '{{}}', '{{}}', '[]'
        FROM (
            SELECT i, now() - make_interval(secs => ({runs} - i) * {span_s}.0 / {runs}) AS t,
                ({hosts})[1 + i % {host_count}] AS h, ({facts})[1 + i % {host_count}] AS f,
                ({configs})[1 + (i % {host_count}) * 2 + (i / 1000) % 2] AS c,
                ({workloads})[1 + (i * 7) / {host_count} % {workload_count}] AS w,
                ({builds})[1 + greatest(0, least(
                    (i * {len(VERSIONS)}) / ({runs} + 1) + i % 3 - 1, {len(VERSIONS) - 1}))] AS b
            FROM generate_series(1, {runs}) AS i
        ) AS s JOIN builds_build bb ON bb.id = s.b
        ORDER BY i
    """
    result = f"""
        INSERT INTO results_result (run_id, clients, repeat, threads, tps, transactions,
            failed_transactions, latency_avg_ms, latency_stddev_ms, aborted, errors,
            statements, comparability_key, steady_tps, steady_tps_se, steady_latency_ms,
            steady_latency_se_ms, steady_seconds, steady_block)
        SELECT r.id, c, rep, c, tps, (tps * 120)::bigint, 0, 1000.0 * c / tps,
            100.0 * c / tps, false, '{{}}',
            '[{{"latency_ms": 0.1, "command": "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"}}]',
            r.comparability_key, tps, tps / 100, 1000.0 * c / tps, 10.0 * c / tps, 108, 3
        FROM results_run r, unnest({levels}) AS c, generate_series(1, {REPEATS}) AS rep,
            LATERAL (SELECT 800.0 * least(c, 32) * (1 + (r.id % 13) / 50.0) + rep AS tps) x
    """  # noqa: E501
    aggregate = """
        INSERT INTO results_levelaggregate (run_id, clients, comparability_key, host_id,
            build_id, workload_id, samples, aborted, tps_median, tps_mean, tps_stddev, tps_min,
            tps_max, latency_median_ms, latency_mean_ms, latency_stddev_ms, latency_min_ms,
            latency_max_ms, computed_at)
        SELECT res.run_id, res.clients, min(res.comparability_key), min(host_id), min(build_id),
            min(workload_id), count(*), 0, percentile_cont(0.5) WITHIN GROUP (ORDER BY tps),
            avg(tps), stddev_samp(tps), min(tps), max(tps),
            percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_avg_ms), avg(latency_avg_ms),
            stddev_samp(latency_avg_ms), min(latency_avg_ms), max(latency_avg_ms), now()
        FROM results_result res JOIN results_run run ON run.id = res.run_id
        GROUP BY res.run_id, res.clients
    """
    # One row of arrays per result, as an upload writes it (results.models.ProgressSeries).
    n = PROGRESS_SAMPLES
    progress = f"""
        INSERT INTO results_progressseries (result_id, created_at, t, tps, latency_ms,
            stddev_ms, failed, skipped, lag_ms)
        SELECT res.id, run.created_at,
            ARRAY(SELECT s::float8 FROM generate_series(1, {n}) AS s),
            ARRAY(SELECT res.tps + (s % 7) - 3 FROM generate_series(1, {n}) AS s),
            array_fill(res.latency_avg_ms, ARRAY[{n}]),
            array_fill(res.latency_stddev_ms, ARRAY[{n}]), array_fill(0::bigint, ARRAY[{n}]),
            array_fill(NULL::bigint, ARRAY[{n}]), array_fill(NULL::float8, ARRAY[{n}])
        FROM (SELECT id, run_id, tps, latency_avg_ms, latency_stddev_ms FROM results_result
              ORDER BY id DESC LIMIT {with_progress}) res
        JOIN results_run run ON run.id = res.run_id
    """
    # The agent's OS samples of those results, one JSON object a second, in the monthly table
    # an upload writes (ResultTelemetry). The same seconds for each: the array is built once
    # (an uncorrelated subquery) and stored per row, as an upload's would be.
    telemetry = f"""
        INSERT INTO results_resulttelemetry (result_id, created_at, samples)
        SELECT res.id, run.created_at, (
            SELECT jsonb_agg(jsonb_build_object(
                't', s::float8, 'cpu_user_pct', 40 + s % 5, 'cpu_system_pct', 8.0,
                'cpu_iowait_pct', s % 3, 'cpu_idle_pct', 50 - s % 5 - s % 3,
                'disk_util_pct', 20 + s % 7, 'disk_write_bytes_per_s', 4e6 + 1000 * (s % 11),
                'client_cpu_pct', 35.0) ORDER BY s)
            FROM generate_series(1, {n}) AS s)
        FROM (SELECT id, run_id FROM results_result ORDER BY id DESC LIMIT {with_progress}) res
        JOIN results_run run ON run.id = res.run_id
    """
    # What pgbench printed, for the results that carry progress (agent uploads; imported
    # summaries have none), in the monthly table an upload writes (ResultOutput).
    output = f"""
        INSERT INTO results_resultoutput (result_id, created_at, text)
        SELECT res.id, run.created_at,
            'pgbench (16.4)' || E'\\n' || 'number of clients: ' || res.clients || E'\\n'
            || 'tps = ' || res.tps || ' (without initial connection time)' || E'\\n'
        FROM (SELECT id, run_id, clients, tps FROM results_result
              ORDER BY id DESC LIMIT {with_progress}) res
        JOIN results_run run ON run.id = res.run_id
    """
    # The text each imported run was read from, in the monthly table an import writes
    # (RunImportText): a line per level, as a pasted table of medians (a few hundred bytes).
    imported = """
        INSERT INTO results_runimporttext (run_id, created_at, text)
        SELECT r.id, r.created_at,
            string_agg(a.clients || ' clients: tps = ' || a.tps_median, E'\\n' ORDER BY a.clients)
        FROM results_run r JOIN results_levelaggregate a ON a.run_id = r.id
        WHERE r.source = 'import'
        GROUP BY r.id, r.created_at
    """
    # A change at 8 clients in one run of REGRESSION_EVERY, alternately a regression and an
    # improvement of 5%, detected an hour after the run, confirmed (CONFIRM detections).
    regression = f"""
        INSERT INTO regressions_regression (kind, state, note, comparability_key, clients,
            host_id, workload_id, run_before_id, run_after_id, before_tps, after_tps,
            before_runs, after_runs, change, change_low, change_high, p_value, detected_at,
            redetected_at, detections)
        SELECT CASE WHEN r.id % 2 = 0 THEN 'regression' ELSE 'improvement' END, 'new', '',
            r.comparability_key, 8, r.host_id, r.workload_id, r.id - 1, r.id, 6400.0,
            CASE WHEN r.id % 2 = 0 THEN 6080.0 ELSE 6720.0 END, 10, 10,
            CASE WHEN r.id % 2 = 0 THEN -0.05 ELSE 0.05 END,
            CASE WHEN r.id % 2 = 0 THEN -0.07 ELSE 0.03 END,
            CASE WHEN r.id % 2 = 0 THEN -0.03 ELSE 0.07 END,
            0.00001, r.finished_at + interval '1 hour', r.finished_at + interval '1 hour',
            {CONFIRM}
        FROM results_run r WHERE r.id % {REGRESSION_EVERY} = 0
    """
    return [run, result, aggregate, progress, telemetry, output, imported, regression]
