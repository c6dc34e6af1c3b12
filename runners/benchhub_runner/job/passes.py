"""The unmeasured passes after the sweep, one level each: the evidence pass (the collectors
that would slow a measured pass) and the perf profile. Their findings go into the evidence of
the level's first repeat; nothing fails for want of them."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from ..evidence import PASS_PARTS, LevelEvidence, sampling_rate
from ..evidence.profile import ProfileError, Profiler
from ..jobspec.spec import JobSpec
from ..measure import pgbench
from ..measure.level import Level, LevelRun
from ..results.runs import VersionRun
from ..servers.cluster import ClusterError
from .errors import StageError
from .state import JobState

logger = logging.getLogger(__name__)

# The unmeasured passes (evidence, profile) run at most this long (and their warm-up too):
# they need enough transactions and samples, not the measured pass's length.
EXTRA_PASS_MAX_S = 30.0


class _Recording:
    """Starts perf when the pass's measured streams start, stops it when they end."""

    def __init__(self, profiler: Profiler, postmaster: int) -> None:
        self.profiler = profiler
        self.postmaster = postmaster
        self.profile: dict[str, Any] | None = None
        self.error: str | None = None
        self.sampling_rate = 1.0

    def log_prefix(self, name: str) -> Path | None:
        return None

    def begin(self) -> None:
        try:
            self.profiler.start(self.postmaster)
        except ProfileError as exc:
            self.error = str(exc)

    def end(self) -> None:
        if self.error is None:
            try:
                self.profile = self.profiler.stop()
            except ProfileError as exc:
                self.error = str(exc)


def evidence_passes(state: JobState, run: VersionRun) -> None:
    """One extra, unmeasured pass per level after the sweep, with pg_stat_statements and
    pgbench's sampled per-transaction log on: the collectors that would slow the measured
    passes. Their top statements and latency go into the evidence of that level's first
    repeat. Nothing fails for want of them."""
    if run.evidence is None:
        return
    for clients in sorted(set(state.job.clients)):
        targets = [r for r in run.results if r["clients"] == clients and "evidence" in r]
        if not targets:
            continue
        state.check_stop()
        target = min(targets, key=lambda r: r["repeat"])["evidence"]
        if not state.config.evidence_pass:
            for name in PASS_PARTS:
                target.setdefault("unavailable", {})[name] = "evidence passes are off"
            continue
        try:
            parts = evidence_pass(state, run, clients)
        except (ClusterError, StageError, pgbench.PgbenchError) as exc:
            logger.info("%s: no evidence pass at c=%s: %s", run.requested, clients, exc)
            for name in PASS_PARTS:
                target.setdefault("unavailable", {})[name] = f"evidence pass: {exc}"[:500]
            continue
        unavailable = parts.pop("unavailable", {})
        target.update({k: v for k, v in parts.items() if k in PASS_PARTS})
        for name in PASS_PARTS:
            if name in unavailable:
                target.setdefault("unavailable", {})[name] = unavailable[name]


def evidence_pass(state: JobState, run: VersionRun, clients: int) -> dict[str, Any]:
    if run.evidence is None:
        raise StageError("evidence", "the server gave no evidence")
    state.update(stage="evidence", version=run.requested, clients=clients, line="")
    job, duration = extra_pass_job(state.job, clients)
    expected = expected_transactions(state.job, run, clients, duration_s=duration)
    evidence = LevelEvidence(
        cluster=run.cluster,
        server=run.evidence,
        log_dir=state.work / "txlog" / f"evidence-{clients}",
        sampling_rate=sampling_rate(expected),
        client_version=state.client_version,
    )
    measurement = extra_level_run(state, run, job)
    level = Level(clients=clients, repeat=0, threads=state.job.threads_for(clients))
    with state.stage("evidence"):
        state.switch_to(run)
        measurement.prepare(level)
        run.evidence.tracking(run.cluster, on=True)
        try:
            measurement.run(level, watch=lambda pid: None, evidence=evidence)
        finally:
            run.evidence.tracking(run.cluster, on=False)
    return evidence.payload()


def extra_pass_job(job: JobSpec, clients: int) -> tuple[JobSpec, float | None]:
    """The job as an unmeasured pass at `clients` runs it: a long level (and its warm-up)
    cut to EXTRA_PASS_MAX_S; and that level's duration in seconds (None: a -t job)."""
    duration = job.duration_for(clients)
    cut = min(duration, EXTRA_PASS_MAX_S) if duration else None
    extra = dataclasses.replace(
        job,
        warmup_s=min(job.warmup_s, EXTRA_PASS_MAX_S),
        level_durations={**job.level_durations, **({clients: cut} if cut else {})},
    )
    return extra, cut


def extra_level_run(state: JobState, run: VersionRun, job: JobSpec) -> LevelRun:
    return LevelRun(
        job=job,
        cluster=run.cluster,
        target=state.target(run),
        bindir=state.client_bindir,
        client_version=state.client_version,
        work=state.work,
        processes=state.processes,
        on_line=lambda line: None,
        timeout_s=state.config.job_timeout_s,
    )


def expected_transactions(
    job: JobSpec, run: VersionRun, clients: int, *, duration_s: float | None = None
) -> float | None:
    """How many transactions a pass of `duration_s` (default: the level's) at `clients`
    will run, from the job (-t) or from the last result at that level (None: not known)."""
    if job.transactions_per_client is not None:
        return float(job.transactions_per_client * clients)
    duration = duration_s or job.duration_for(clients) or 0.0
    for result in reversed(run.results):
        if result["clients"] == clients and result.get("tps"):
            return float(result["tps"]) * duration
    return None


def profile(state: JobState, run: VersionRun) -> None:
    """A perf profile of the server in an extra, unmeasured pass at the job's
    profile_clients level (the largest by default), after the sweep; it goes into the
    evidence of that level's first repeat. Nothing fails for want of it."""
    clients = state.job.profile_clients or max(state.job.clients)
    targets = [r for r in run.results if r["clients"] == clients and "evidence" in r]
    if not targets:
        return
    target = min(targets, key=lambda r: r["repeat"])
    evidence = target["evidence"]
    try:
        evidence["profile"] = profile_pass(state, run, clients)
    except (ProfileError, ClusterError, StageError, pgbench.PgbenchError) as exc:
        logger.info("%s: no profile: %s", run.requested, exc)
        evidence.setdefault("unavailable", {})["profile"] = str(exc)[:500]


def profile_pass(state: JobState, run: VersionRun, clients: int) -> dict[str, Any]:
    why = Profiler.available() if state.config.profile else "profiling is off on this host"
    if why is not None:
        raise ProfileError(why)
    state.update(stage="profile", version=run.requested, clients=clients, line="")
    # The pass only needs enough samples: a long level is cut to EXTRA_PASS_MAX_S.
    job, _ = extra_pass_job(state.job, clients)
    measurement = extra_level_run(state, run, job)
    level = Level(clients=clients, repeat=0, threads=state.job.threads_for(clients))
    # perf runs as root: its files go where the job cannot put a link.
    profiler = Profiler(work=state.agent_dir())
    with state.stage("profile"):
        state.switch_to(run)
        measurement.prepare(level)
        postmaster = run.cluster.postmaster_pid()
        if postmaster is None:
            raise ProfileError("the server is not running")
        recording = _Recording(profiler, postmaster)
        try:
            measurement.run(level, watch=lambda pid: None, evidence=recording)
        finally:
            profiler.abort()
    if recording.profile is None:
        raise ProfileError(recording.error or "perf did not run")
    return recording.profile
