"""Writes for runs and results: submitting an upload, and computing per-level aggregates."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from benchhub_runner.jobspec.plan import RUN_PLAN_FIELDS
from benchhub_runner.measure.telemetry import client_bound
from benchhub_runner.results.payload import PROGRESS_FIELDS
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchhub.digests import json_digest
from benchhub.errors import ApplicationError
from benchhub.hosts.models import RunnerToken, host_name_key
from benchhub.hosts.services import host_facts_record, host_get_or_create
from benchhub.results.comparability import comparability_key
from benchhub.results.copying import details_copy, instances_copy, progress_copy, series_arrays
from benchhub.results.hooks import job_check, run_aggregated
from benchhub.results.models import (
    DetailPruning,
    LevelAggregate,
    ProgressSeries,
    Result,
    ResultEvidence,
    ResultOutput,
    ResultTelemetry,
    Run,
    RunImportText,
    StreamOutput,
    StreamResult,
)
from benchhub.results.partitions import month_start
from benchhub.results.references import run_references
from benchhub.results.selectors import level_aggregate_of, run_get
from benchhub.stats.repeats import WITHIN_REPLICATES, Repeat, steady_window
from benchhub.stats.repeats import repeat as repeat_from_samples
from benchhub.stats.stationarity import repeat_unsteadiness

logger = logging.getLogger(__name__)


class RunConflict(ApplicationError):
    """A run with this UUID exists with different content: a retry must resend the same run."""

    status = 409


class HostNotAllowed(ApplicationError):
    """A runner token may upload only for its own host."""

    status = 403


@dataclass(frozen=True)
class Submission:
    run: Run
    created: bool


def payload_digest(data: Any) -> str:
    """SHA-256 of the canonical JSON of an upload (as parsed), to tell a retry from a different
    run."""
    return json_digest(data)


def check_run_host(*, host_name: str, runner_token: RunnerToken | None) -> None:
    if runner_token is not None and runner_token.host.name != host_name:
        raise HostNotAllowed(
            "forbidden_host",
            f"This runner token belongs to host '{runner_token.host.name}', not '{host_name}'.",
            field="host.name",
        )


class SourceNotAllowed(ApplicationError):
    """A person's upload claimed to be an agent's run."""

    status = 403


def check_import_host(*, host_name: str, runner_token: RunnerToken | None) -> None:
    """A person's upload (an import) may not go under the name of an agent's host.

    A host with a runner token is measured by its agent: its facts are what the agent reported
    and `last_seen_at` says the agent is alive. An import under its name would replace those
    facts and mark the host online, so it is refused; imports name a host record of their own.
    """
    if runner_token is not None:
        return
    # In any spelling: `BENCH-A` beside the agent's `bench-a` would pass for it.
    agents = RunnerToken.objects.filter(host__name_key=host_name_key(host_name))
    agent_host = agents.values_list("host__name", flat=True).first()
    if agent_host is not None:
        alike = "" if agent_host == host_name else f" (spelled '{agent_host}')"
        raise HostNotAllowed(
            "forbidden_host",
            f"'{host_name}' is an agent's host{alike}: imports cannot replace its facts. Import "
            f"under a host name of your own (e.g. '{agent_host}-import').",
            field="host.name",
        )


def check_run_source(*, source: str, runner_token: RunnerToken | None, user: User | None) -> None:
    # "agent" says a BenchHub agent measured this on the host it names; only that host's runner
    # token may say so, or a signed-in person could pass made-up numbers off as the host's.
    # (Code that calls run_submit with neither, e.g. the self-benchmark, is trusted.)
    if runner_token is None and user is not None and source == Run.Source.AGENT:
        raise SourceNotAllowed(
            "forbidden_source",
            'Only an agent\'s runner token uploads runs as source "agent"; people upload '
            '"import" or "summary".',
            field="source",
        )


def _stored(run_uuid: Any, digest: str) -> Submission | None:
    # Nearly every upload is new: that answer comes from the UUID's index alone (reading the
    # run with its ten relations cost ~10 ms of query planning per upload, bench/ ingest).
    found = Run.objects.filter(uuid=run_uuid).values_list("payload_digest", flat=True).first()
    if found is None:
        return None
    if found != digest:
        raise RunConflict(
            "conflict",
            f"Run {run_uuid} was already stored with different content.",
            field="run_uuid",
        )
    run = run_get(run_uuid=run_uuid)
    if run is None:  # deleted between the two reads
        return None
    return Submission(run=run, created=False)


def run_submit(
    *,
    data: dict[str, Any],
    digest: str,
    runner_token: RunnerToken | None = None,
    user: User | None = None,
) -> Submission:
    """Store a validated upload (results.serializers.RunUploadSerializer) as one run.

    Idempotent on `data["run_uuid"]`: a retry with the same digest returns the stored run;
    different content under a stored UUID raises RunConflict. Everything is written in one
    transaction, so a failure stores nothing. The run joins comparisons, History and lists in
    that transaction: its per-level aggregates and each repeat's steady-state means are
    computed from what the request carries. Queues on commit what is slow, the within-run
    standard errors (a block bootstrap per repeat), and what follows them (run_aggregate).
    """
    check_run_host(host_name=data["host"]["name"], runner_token=runner_token)
    check_import_host(host_name=data["host"]["name"], runner_token=runner_token)
    check_run_source(source=data["source"], runner_token=runner_token, user=user)
    # Nearly every upload is new, so whether the run is stored is asked only when the write
    # fails: the run's unique UUID refuses a stored one, and a retry of a job's run may find
    # its attempt over. Under load every round trip to the database costs several ms (bench/,
    # ingest), and a read ahead of each upload was one of them.
    try:
        with transaction.atomic():
            run = _run_create(data=data, digest=digest, runner_token=runner_token, user=user)
            transaction.on_commit(lambda: aggregate_enqueue(run_id=run.pk))
    except (IntegrityError, ApplicationError):
        # Stored before (a retry), or by a concurrent upload of the same run that committed
        # first: the stored one is the answer. Different content raises RunConflict.
        stored = _stored(data["run_uuid"], digest)
        if stored is None:
            raise
        return stored
    return Submission(run=run, created=True)


def _run_create(
    *,
    data: dict[str, Any],
    digest: str,
    runner_token: RunnerToken | None,
    user: User | None,
) -> Run:
    host_in, config_in = data["host"], data["configuration"]
    job_id = data["job"]["id"] if "job" in data else None
    if job_id is not None:
        job_check(job_id=job_id, attempt=data["job"]["attempt"], token=runner_token)
    # An agent's token holds its host (check_run_host saw the same name), read with the token.
    host = runner_token.host if runner_token is not None else None
    if host is None:
        host = host_get_or_create(name=host_in["name"])
    references = run_references(data=data, host=host)
    build, config, workload = references.build, references.config, references.workload
    facts = host_facts_record(
        host=host,
        facts=host_in["facts"],
        lscpu=host_in["lscpu"],
        sysctl=host_in["sysctl"],
        extra=host_in["extra"],
        # Only an agent's call says its host is online.
        seen=runner_token is not None,
        snapshot=references.facts,
    )
    key = comparability_key(
        host_fingerprint=facts.fingerprint,
        config_hash=config.hash,
        workload_hash=workload.definition_hash,
        scale=data.get("scale"),
        duration_s=data.get("duration_s"),
        transactions_per_client=data.get("transactions_per_client"),
        level_durations=data["level_durations"],
    )
    stopped = data.get("stopped") or {}
    run = Run.objects.create(
        uuid=data["run_uuid"],
        host=host,
        host_facts=facts,
        build=build,
        config=config,
        workload=workload,
        settings=config_in["settings"],
        setting_sources=config_in["sources"],
        config_overrides=config_in["overrides"],
        settings_translated=config_in["translated"],
        settings_not_applied=config_in["not_applied"],
        # The plan fields a run records (benchhub_runner.jobspec.plan), as the upload gave them.
        **{name: data.get(name) for name in RUN_PLAN_FIELDS},
        level_sequence=data["level_sequence"],
        stop_stage=stopped.get("stage", ""),
        stop_reason=stopped.get("reason", ""),
        stop_clients=stopped.get("clients"),
        started_at=data["started_at"],
        finished_at=data.get("finished_at"),
        status=data["status"],
        source=data["source"],
        pgbench_version=data["pgbench_version"],
        server_version=data["server_version"],
        # An omitted "init" arrives as {} (DRF does not fill a nested default's own defaults).
        init_output=data["init"].get("output", ""),
        init_timings=data["init"].get("timings", {}),
        client_limits=data.get("client_limits", {}),
        tablespaces=[dict(t) for t in data.get("tablespaces") or []],
        notes=data["notes"],
        comparability_key=key,
        payload_digest=digest,
        submitted_by_runner=runner_token,
        job_id=job_id,
        job_attempt=data["job"]["attempt"] if job_id is not None else None,
        submitted_by=user if user is not None and user.is_authenticated else None,
    )
    rows = _results_create(run=run, results=data["results"])
    _levels_write(run=run, results=rows)
    return run


def _client_bound(row: Result, telemetry: list[dict[str, Any]]) -> bool | None:
    """The agent's flag, or the agent's rule (benchhub_runner.measure.telemetry.client_bound:
    pgbench's CPU per thread and the host's idle CPU) applied here to the telemetry the request
    carries, so a run of an agent with an older rule is judged as today's: either finding it
    client-bound flags it."""
    judged = client_bound(telemetry, client_threads=row.threads)
    if judged or row.client_bound:
        return True
    return judged if judged is not None else row.client_bound


# Where series_arrays puts the fields a repeat's steady-state mean is taken from.
SAMPLE_T, SAMPLE_TPS, SAMPLE_LATENCY = (
    PROGRESS_FIELDS.index(n) for n in ("t", "tps", "latency_ms")
)

# What an uploaded result carries beside its own row: written to tables of their own.
DETAIL_KEYS = ("progress", "telemetry", "streams", "evidence", "raw_output")


def _results_create(*, run: Run, results: list[dict[str, Any]]) -> list[Result]:
    rows = [
        Result(
            run=run,
            comparability_key=run.comparability_key,
            **{k: v for k, v in r.items() if k not in DETAIL_KEYS},
        )
        for r in results
    ]
    # Each result's samples as a list per field, in time order: what the COPY below writes, and
    # what the steady-state means are taken from (zipped in C, not a tuple per sample in Python).
    series = [series_arrays(r["progress"]) for r in results]
    for row, r, arrays in zip(rows, results, series, strict=True):
        row.client_bound = _client_bound(row, r["telemetry"])
        # Written by the COPY below; the bootstrap of their standard errors is the worker's.
        steady = None
        if _measured(row):
            t, tps, latency = arrays[SAMPLE_T], arrays[SAMPLE_TPS], arrays[SAMPLE_LATENCY]
            steady = _steady(run, row, t, tps, latency, replicates=0)
        _steady_set(row, steady)
    instances_copy(rows)
    ResultEvidence.objects.bulk_create(
        ResultEvidence(result=row, created_at=run.created_at, **r["evidence"])
        for row, r in zip(rows, results, strict=True)
        if r.get("evidence")
    )
    streams = [
        (StreamResult(result=row, **{k: v for k, v in s.items() if k != "raw_output"}), s)
        for row, r in zip(rows, results, strict=True)
        for s in r.get("streams", [])
    ]
    StreamResult.objects.bulk_create(stream for stream, _ in streams)
    details_copy(
        ResultOutput,
        (
            (row.pk, run.created_at, r.get("raw_output", ""))
            for row, r in zip(rows, results, strict=True)
        ),
    )
    details_copy(
        StreamOutput,
        ((stream.pk, run.created_at, s.get("raw_output", "")) for stream, s in streams),
    )
    progress_copy(
        (row.pk, run.created_at, arrays) for row, arrays in zip(rows, series, strict=True)
    )
    details_copy(
        ResultTelemetry,
        ((row.pk, run.created_at, r["telemetry"]) for row, r in zip(rows, results, strict=True)),
        field="samples",
    )
    return rows


def run_import_text_set(*, run: Run, text: str) -> None:
    """Keep `text` as the imported run's source (RunImportText, in the monthly partition of the
    run's created_at); replaces the one it had, none when `text` is empty. In the caller's
    transaction."""
    if not text:
        RunImportText.objects.filter(run=run).delete()
        return
    RunImportText.objects.update_or_create(
        run=run, defaults={"created_at": run.created_at, "text": text}
    )


def aggregate_enqueue(*, run_id: int) -> None:
    """Queue the aggregation of a run. A broker outage is logged, not raised: the upload has
    committed, and the periodic sweep (results.tasks.aggregate_pending) picks the run up later."""
    from benchhub.results.tasks import aggregate_run

    try:
        aggregate_run.apply_async(args=(run_id,))
    except Exception:
        logger.warning(
            "could not queue aggregation of run %s; the sweep will", run_id, exc_info=True
        )


@transaction.atomic
def run_aggregate(*, run_id: int) -> int:
    """Recompute the run's LevelAggregate rows and each repeat's steady-state means, now with
    their within-run standard errors (the block bootstrap the upload leaves to this task) and
    whether each held still inside the run (`unsteady`, stats.stationarity), and mark the run
    aggregated; returns how many levels.

    Aborted results are counted but left out of every statistic. Idempotent: running it twice
    leaves the same rows. Locks the run row so two workers don't interleave their writes.
    Announces results.hooks.run_aggregated on commit (change detection and a bisection's next
    step subscribe).
    """
    run = Run.objects.select_for_update().get(pk=run_id)
    results = list(run.results.only("clients", "tps", "latency_avg_ms", "aborted"))
    # Retention dropped the samples of a pruned run's month: the stored means are all that is
    # left of them, and recomputing from nothing would change the run's verdicts.
    if not DetailPruning.objects.filter(month=month_start(run.created_at.astimezone(UTC))).exists():
        _steady_state(run=run, results=results)
    LevelAggregate.objects.filter(run=run).delete()
    levels = _levels_write(run=run, results=results)
    run.aggregated_at = timezone.now()
    run.save(update_fields=["aggregated_at"])
    # Change detection reads these aggregates, and a bisection's verdicts the steady-state
    # means: both exist for others' transactions once this one commits.
    run_id, job_id = run.pk, run.job_id
    transaction.on_commit(lambda: run_aggregated.send(sender=Run, run_id=run_id, job_id=job_id))
    return levels


def _levels_write(*, run: Run, results: list[Result]) -> int:
    """Create the run's LevelAggregate rows from its results; returns how many levels."""
    by_level: dict[int, list[Result]] = {}
    for result in results:
        by_level.setdefault(result.clients, []).append(result)
    # COPY, as the results are written: the ORM's INSERT cost an upload more than the rows.
    instances_copy(
        [level_aggregate_of(run=run, clients=c, results=rs) for c, rs in sorted(by_level.items())]
    )
    return len(by_level)


STEADY_FIELDS = [
    "steady_tps",
    "steady_tps_se",
    "steady_latency_ms",
    "steady_latency_se_ms",
    "steady_seconds",
    "steady_block",
]


def _steady_state(*, run: Run, results: list[Result]) -> None:
    """Store each valid repeat's steady-state means (stats.repeats): the mean of its
    per-second tps and latency after the warm-up, with their block-bootstrap standard errors.
    One query reads the run's progress samples; the bootstrap is seeded by the result id, so
    aggregating again writes the same numbers."""
    # Each result's arrays as stored: in time order (ProgressSeries), as the upload had them.
    series = {
        result_id: (t, tps, latency)
        for result_id, t, tps, latency in ProgressSeries.objects.filter(result__run=run)
        .values_list("result_id", "t", "tps", "latency_ms")
        .order_by()
    }
    for result in results:
        t, tps, latency = series.get(result.pk, ([], [], []))
        _steady_set(result, _steady(run, result, t, tps, latency) if _measured(result) else None)
        _unsteady_set(result, t, tps, duration_s=run.duration_s)
    Result.objects.bulk_update(results, [*STEADY_FIELDS, "unsteady", "unsteady_change"])


def _unsteady_set(
    result: Result,
    t: Sequence[float],
    tps: Sequence[float | None],
    *,
    duration_s: float | None,
) -> None:
    """Whether the repeat's tps held still inside the run (stats.stationarity); an aborted
    repeat is not checked."""
    found = None
    if _measured(result):
        found = repeat_unsteadiness(list(zip(t, tps, strict=True)), duration_s=duration_s)
    result.unsteady = found.reason() if found else ""
    result.unsteady_change = found.change if found else None


def _measured(result: Result) -> bool:
    return not result.aborted and bool(result.tps)


def _steady(
    run: Run,
    result: Result,
    t: Sequence[float],
    tps: Sequence[float | None],
    latency: Sequence[float | None],
    *,
    replicates: int = WITHIN_REPLICATES,
) -> Repeat | None:
    """The repeat's steady-state means from its samples as arrays in time order (as an upload
    carries them and ProgressSeries stores them): the steady windows (stats.repeats)."""
    latency_ms = result.latency_avg_ms if result.latency_avg_ms else None
    try:
        return repeat_from_samples(
            tps=result.tps,
            latency_ms=latency_ms,
            tps_samples=steady_window(t, tps, duration_s=run.duration_s),
            latency_samples=steady_window(t, latency, duration_s=run.duration_s),
            seed=result.pk or 0,
            replicates=replicates,
        )
    except ValueError:
        # A stalled run (every steady second at 0 tps, or no latency): no mean to compare.
        logger.warning("no steady-state mean for result %s", result.pk, exc_info=True)
        return None


def _steady_set(result: Result, steady: Repeat | None) -> None:
    result.steady_tps = steady.tps.value if steady else None
    result.steady_tps_se = steady.tps.within_se if steady else None
    result.steady_latency_ms = steady.latency.value if steady and steady.latency else None
    result.steady_latency_se_ms = steady.latency.within_se if steady and steady.latency else None
    result.steady_seconds = steady.tps.seconds if steady else 0
    result.steady_block = steady.tps.block if steady else 0


STEADY_BACKFILL_BATCH = 500


def runs_steady_backfill(*, after: int = 0, limit: int = STEADY_BACKFILL_BATCH) -> list[int]:
    """Aggregate again up to `limit` aggregated runs (ids above `after`, in id order) that have
    a valid result without its steady-state mean (stored before those fields existed); returns
    their ids. Each run is its own transaction (run_aggregate), so an interrupted backfill keeps
    what it did; a result whose samples give no mean stays without one, and is not retried
    within one pass (`after` moves on)."""
    ids = list(
        Run.objects.filter(
            pk__gt=after,
            aggregated_at__isnull=False,
            results__aborted=False,
            results__tps__gt=0,
            results__steady_tps__isnull=True,
        )
        .order_by("id")
        .values_list("pk", flat=True)
        .distinct()[:limit]
    )
    for run_id in ids:
        run_aggregate(run_id=run_id)
    return ids
