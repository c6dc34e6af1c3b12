"""Running one claimed job: provision, one cluster per version, load, sweep, parse, spool.

Order of work. Every version gets its own cluster in the job's work directory, initialised and
loaded once. Only one server runs at a time (the published experiments insist on it): before a
measurement the agent starts that version's server (if it is not the one running), takes a
checkpoint, runs pgbench with `-P 1 -r` while sampling the OS, and parses the output. With
several versions the steps are interleaved by default (for each level and repeat, each version in
turn), so drift on the host (thermal, background jobs, SSD garbage collection) spreads evenly.

A version that names a recipe comes with its build spec in the claim: it is built (or its
install reused) by `build.ensure_build` at stage "build", with live progress in the heartbeats,
and its installation is then used like any other; the run carries the build's provenance.

Failures carry their stage (provision, build, initdb, start, setup,
`level c=N repeat=R version=V`, upload) so the server can say where a job broke; a failed build
says at which of its own stages (patch, configure, make, ...) and ends with its log's tail.
An aborted pgbench run is not a failure of the job: it is stored as an aborted result with its
errors. A failure during the sweep keeps what was measured before it: every version with
results becomes a `partial` run that says where and why the sweep stopped
(StageError.payloads), which the agent uploads before it reports the failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import os
import resource
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import pgbench
from .account import (
    AccountError,
    account_end,
    account_find,
    account_remove,
    job_account_name,
    job_accounts_end_left,
    runner_account,
)
from .bindirs import CLIENT_TOOLS, has_tools
from .build import Build, BuildError, BuildProgress, BuildSpec, BuildStopped, ensure_build
from .cluster import JOB_ROLE, SUPERUSER, Cluster, ClusterError, free_port
from .config import Config
from .confine import cgroup_end, job_cgroup_create
from .evidence import PASS_PARTS, LevelEvidence, ServerEvidence, sampling_rate, statements
from .evidence.profile import ProfileError, Profiler
from .hugepages import HugePagesShort, host_huge_pages, huge_pages_check, wants_huge_pages
from .jobspec import JobSpec
from .level import Level, LevelRun, level_sequence
from .parse import PgbenchParseError, parse_init_output
from .payload import init_timings, result_payload, run_payload
from .provision import Installation, ProvisionError, provision
from .streams import (
    ConnectionsShort,
    StreamFigures,
    level_figures,
    max_connections_for,
    nofile_needed,
    substitute,
    uses_builtin,
)
from .sysinfo import host_facts
from .tablespaces import RECORD as TABLESPACES_RECORD
from .tablespaces import JobTablespaces, TablespaceError, leftovers_remove
from .telemetry import TelemetrySampler, client_bound

logger = logging.getLogger(__name__)


class StageError(Exception):
    """The job failed at `stage`; the message is for the person who queued it. `payloads` are
    the partial runs of a sweep that failed midway (empty before the sweep began)."""

    def __init__(self, stage: str, message: str) -> None:
        self.stage = stage
        self.payloads: list[dict[str, Any]] = []
        super().__init__(message)


class Interrupted(Exception):
    """The job was cancelled, its lease was lost, or the agent is stopping."""


@dataclass(frozen=True)
class Step:
    version: str
    clients: int
    repeat: int
    # The version's place in the job: an A/A job names one version twice, two separate series.
    series: int = 0

    @property
    def stage(self) -> str:
        return f"level c={self.clients} repeat={self.repeat} version={self.version}"


@dataclass
class VersionRun:
    """What is known about one version's run while the job goes on."""

    requested: str
    installation: Installation
    cluster: Cluster
    run_uuid: str = field(default_factory=lambda: str(uuid.uuid4()))
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    settings: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    server_version: str = ""
    init_output: str = ""
    init_timings: dict[str, float] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    stopped: dict[str, Any] | None = None  # where and why a partial run's sweep stopped
    build: Build | None = None
    evidence: ServerEvidence | None = None  # what the server can give (None: probe failed)


# What a failure message may hold (the server keeps 20000 characters): the head names the build
# stage, the tail is the end of the build log (a rejected hunk, a compiler error).
MESSAGE_HEAD, MESSAGE_TAIL = 2000, 16000
BUILD_PROGRESS_KEYS = ("build_stage", "compiled", "elapsed_s")


def failure_message(text: str) -> str:
    """`text` cut to fit the server's limit, keeping its start and its end."""
    if len(text) <= MESSAGE_HEAD + MESSAGE_TAIL:
        return text
    return f"{text[:MESSAGE_HEAD]}\n[...]\n{text[-MESSAGE_TAIL:]}"


def stale_clusters_stop(jobs_dir: Path, *, tablespaces: dict[str, Path] | None = None) -> int:
    """Kill the servers of jobs an earlier agent left running (it was SIGKILLed) and remove
    their directories, the tablespace directories they made under the configured
    `tablespaces`, and (as root) those jobs' cgroups, processes and accounts; returns how many
    servers were killed. Called with the host lock held, so no live job of this host is
    touched."""
    if os.geteuid() == 0:
        for name in job_accounts_end_left(jobs_dir):
            logger.warning("removed %s (processes, cgroup, account) left by an earlier agent", name)
    killed = 0
    for pidfile in jobs_dir.glob("*/v*/data/postmaster.pid"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int(pidfile.read_text().splitlines()[0])
            if Path(f"/proc/{pid}/cwd").resolve() == pidfile.parent.resolve():
                os.kill(pid, signal.SIGKILL)
                killed += 1
    if killed:
        time.sleep(1)  # let the killed postmasters' backends notice and exit
    for directory in jobs_dir.glob("*"):
        leftovers_remove(directory / TABLESPACES_RECORD, configured=tablespaces or {})
        shutil.rmtree(directory, ignore_errors=True)
    return killed


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


def plan(job: JobSpec) -> list[Step]:
    """Every measurement of the job, in the order it runs."""
    levels = level_sequence(job)
    series = list(enumerate(job.versions))
    if job.order == "sequential":
        return [Step(v, c, r, i) for i, v in series for c, r in levels]
    return [Step(v, c, r, i) for c, r in levels for i, v in series]


def raise_nofile(needed: int) -> tuple[int, int]:
    """Raise this process's open-file limit (inherited by pgbench) to `needed` if it is lower.

    The soft limit goes up to the hard one; as root the hard one goes up too. Returns the limits
    in force afterwards, which the run records.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target_hard = max(hard, needed) if os.geteuid() == 0 else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, target_hard), target_hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


class JobRunner:
    """Runs one job; `execute()` returns the upload payloads, one per version.

    `report(progress)` is called with live progress for heartbeats and the terminal; `stop` is
    set from outside (cancel, lost lease, signal) and ends the job at the next chance.
    """

    def __init__(
        self,
        *,
        job: JobSpec,
        config: Config,
        stop: threading.Event,
        report: Callable[[dict[str, Any]], None],
    ) -> None:
        self.job = job
        self.config = config
        self.stop = stop
        self.report = report
        self.work = config.work_dir / "jobs" / f"{job.id}-{job.attempt}"
        # By the version's place in the job: an A/A job names one version twice.
        self.runs: dict[int, VersionRun] = {}
        self.running: VersionRun | None = None
        self.processes: list[pgbench.Process] = []
        self.client_limits: dict[str, int] = {}
        self.progress: dict[str, Any] = {"stage": "provision"}
        self.watchdog_fired = False
        self._client_version: tuple[int, int] = (0, 0)
        self._client: Path | None = None  # chosen at preparation (_choose_client)
        # The database role the job's SQL and pgbench run as: a superuser only on a host whose
        # owner trusts job code from this server (config trust_job_code).
        self.db_user = SUPERUSER if config.trust_job_code else JOB_ROLE
        self.builds: list[Build] = []
        # The OS account of this attempt alone (when the agent is root): its servers, psql and
        # pgbench, and anything they start, which ends with the job.
        self.account_name = job_account_name(job.id, job.attempt, work=config.work_dir)
        self.tablespaces: JobTablespaces | None = None
        # The job's own cgroup, when the host has one to give (confine.py).
        self.cgroup: Path | None = None

    # --- the whole job ----------------------------------------------------------------------

    def execute(self) -> list[dict[str, Any]]:
        steps = plan(self.job)
        watchdog = threading.Timer(self.config.job_timeout_s, self._watchdog)
        watchdog.daemon = True
        watchdog.start()
        try:
            self._prepare()
            for index, step in enumerate(steps, start=1):
                self._check_stop()
                try:
                    self._measure(step, index=index, total=len(steps))
                except StageError as exc:
                    exc.payloads = self._partial(step, exc)
                    raise
            for run in self.runs.values():
                self._check_stop()
                self._evidence_passes(run)
                self._check_stop()
                self._profile(run)
            self._switch_to(None)
            return self._payloads()
        finally:
            watchdog.cancel()
            self.stop_all()
            self._end_processes()
            self._remove_tablespaces()
            # Released only now: eviction must not remove an install whose server ran.
            for build in self.builds:
                build.close()

    def _remove_tablespaces(self) -> None:
        """The job's tablespace directories go with it (the servers are stopped by now)."""
        if self.tablespaces is None:
            return
        for failure in self.tablespaces.remove():
            logger.error("job %s: cannot remove a tablespace directory: %s", self.job.id, failure)

    def _watchdog(self) -> None:
        logger.error(
            "job %s ran past job_timeout_s=%s: stopping it",
            self.job.id,
            self.config.job_timeout_s,
        )
        self.watchdog_fired = True
        self.stop.set()
        self.stop_all()

    def stop_all(self) -> None:
        """Stop pgbench and every server; safe to call from a signal handler, and twice."""
        for process in list(self.processes):
            process.stop()
        for run in self.runs.values():
            with contextlib.suppress(Exception):
                run.cluster.stop()
        self.running = None

    def _confine(self) -> None:
        """As root: the job's account (its home the job's directory) and, where the host has
        cgroup v2, the job's cgroup, before any program of the job exists; logs which layer
        will end the job's processes."""
        if os.geteuid() != 0:
            logger.info("job %s: the agent is not root: job programs run as its user", self.job.id)
            return
        # The account first: a cgroup without one would pass for a leftover at another
        # agent's start (job_accounts_end_left).
        try:
            runner_account(name=self.account_name, home=self.work)
        except AccountError as exc:
            raise StageError("initdb", str(exc)) from exc
        self.cgroup, why = job_cgroup_create(self.account_name)
        if self.cgroup is not None:
            logger.info(
                "job %s: processes confined to cgroup %s, as account %s",
                self.job.id,
                self.cgroup,
                self.account_name,
            )
        else:
            logger.warning(
                "job %s: no cgroup (%s): processes are ended by their account %s alone",
                self.job.id,
                why,
                self.account_name,
            )

    def _end_processes(self) -> None:
        """Kill whatever the job still runs (a background process its code started, in any
        session): its whole cgroup, then anything of its account; and check it is gone."""
        if self.cgroup is not None:
            if left := cgroup_end(self.cgroup):
                logger.error("job %s: processes %s survived cgroup.kill", self.job.id, left)
            else:
                logger.info("job %s: cgroup %s killed, empty and removed", self.job.id, self.cgroup)
                self.cgroup = None
        account = account_find(self.account_name) if os.geteuid() == 0 else None
        if account is None:
            return
        if left := account_end(account):
            logger.error(
                "job %s: processes %s of %s survived SIGKILL", self.job.id, left, account.name
            )

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        account = account_find(self.account_name) if os.geteuid() == 0 else None
        if account is not None:
            self._end_processes()
            try:
                account_remove(account)
            except AccountError as exc:
                logger.error("job %s: %s", self.job.id, exc)

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise Interrupted("stopped")

    def _update(self, **progress: Any) -> None:
        self.progress = {**self.progress, **progress}
        self.report(dict(self.progress))

    # --- preparation: provision, initdb, load ---------------------------------------------------

    @property
    def client_bindir(self) -> Path:
        """The pgbench client's directory (psql beside it), chosen at preparation."""
        if self._client is None:
            raise StageError("provision", "no pgbench client chosen yet")
        return self._client

    def _choose_client(self, installations: list[Installation]) -> Path:
        """One pgbench (and psql) for every server of the job, so that the client never differs
        between the versions compared: the job's pin (`configured`, or a version: one of the
        job's, else one this host provides), or by default the newest of the agent's configured
        client and the job's own installations (a build from source has both programs; prebuilt
        servers have neither). Ties go to the configured client."""
        pin, configured = self.job.client, self.config.client_bindir
        if pin == "configured":
            candidates = [configured]
        elif pin:
            candidates = [
                i.bindir for v, i in zip(self.job.versions, installations, strict=True) if v == pin
            ]
            candidates = candidates or [self._provision(pin).bindir]
        else:
            candidates = [configured, *(i.bindir for i in installations)]
        usable = [
            b for b in dict.fromkeys(candidates) if b is not None and has_tools(b, CLIENT_TOOLS)
        ]
        if not usable:
            wanted = f"the job's client {pin}" if pin else "the agent's client_bindir"
            raise StageError(
                "provision",
                f"no pgbench client: {wanted} ({', '.join(str(c) for c in candidates)}) lacks "
                "pgbench or psql; set client_bindir in the agent's configuration",
            )
        versions = {bindir: pgbench.client_version(bindir) for bindir in usable}
        chosen = max(usable, key=versions.__getitem__)
        logger.info("pgbench client: %s (%s)", chosen, ".".join(map(str, versions[chosen])))
        return chosen

    def _prepare(self) -> None:
        self._check_huge_pages()
        if self.job.tablespaces:
            try:
                self.tablespaces = JobTablespaces.for_job(
                    names=self.job.tablespaces,
                    configured=self.config.tablespaces,
                    prefix=f"benchhub-{self.job.id}-{self.job.attempt}",
                    record=self.work / TABLESPACES_RECORD,
                )
            except TablespaceError as exc:
                raise StageError("provision", str(exc)) from exc
        self.work.mkdir(parents=True, exist_ok=True)
        self.work.chmod(0o755)
        self._confine()
        # Every build first: no server of the job runs while PostgreSQL compiles.
        builds: dict[str, Build] = {}
        for version in self.job.versions:
            self._check_stop()
            spec = self.job.builds.get(version)
            if spec is not None:
                builds[version] = self._build(version, spec)
        installations: list[Installation] = []
        for version in self.job.versions:
            self._check_stop()
            build = builds.get(version)
            if build is None:
                self._update(stage="provision", version=version)
            installations.append(build.installation if build else self._provision(version))
        self._client = bindir = self._choose_client(installations)
        self._client_version = pgbench.client_version(bindir)
        for index, (version, installation) in enumerate(
            zip(self.job.versions, installations, strict=True)
        ):
            self._check_stop()
            build = builds.get(version)
            overrides = dict(self.job.config_overrides)
            requested = overrides.pop("max_connections", None)
            max_connections = self._limits(int(requested) if requested is not None else None)
            with self._stage("initdb"):
                cluster = Cluster(
                    installation=installation,
                    client_bindir=bindir,
                    workdir=self.work / f"v{index}",
                    port=free_port(),
                    max_connections=max_connections,
                    overrides=overrides,
                    preload=(statements.MODULE,) if statements.in_build(installation) else (),
                    account_name=self.account_name,
                )
            self.runs[index] = run = VersionRun(
                requested=version, installation=installation, cluster=cluster, build=build
            )
            self._initialise(run, index)

    def _check_huge_pages(self) -> None:
        """With `huge_pages = on`, the host's free huge pages against the servers' estimated
        need, before any build, initdb or server: StageError at provision naming the number to
        reserve. Servers of a job run one at a time, so one server's need is the job's."""
        overrides = {k.lower(): str(v) for k, v in self.job.config_overrides.items()}
        if not wants_huge_pages(overrides):
            return
        requested = overrides.get("max_connections")
        try:
            limit = max_connections_for(
                self.job.workload, self.job.clients, int(requested) if requested else None
            )
            meminfo = Path("/proc/meminfo").read_text(encoding="utf-8")
            huge_pages_check(overrides, max_connections=limit.value, host=host_huge_pages(meminfo))
        except (HugePagesShort, ConnectionsShort, ValueError, OSError) as exc:
            raise StageError("provision", str(exc)) from exc

    def _limits(self, requested: int | None) -> int:
        """max_connections for the servers and the agent's open-file limit, raised as needed.

        The cluster writes max_connections in its base configuration. A job's override is kept
        as given (StageError at initdb when the streams' peak does not fit in it); without one,
        the default is raised to what the streams need (thousands of idle connections) and
        `client_limits` says so (`max_connections_raised_from`). The open-file limit is raised
        so a workload never fails for want of a file descriptor.
        """
        workload, levels = self.job.workload, self.job.clients
        try:
            limit = max_connections_for(workload, levels, requested)
        except ConnectionsShort as exc:
            raise StageError("initdb", str(exc)) from exc
        soft, hard = raise_nofile(nofile_needed(workload, levels))
        self.client_limits = {
            "max_connections": limit.value,
            "nofile_soft": soft,
            "nofile_hard": hard,
        }
        if limit.raised_from is not None:
            # Said on the run page: the server differs from the default because the agent chose.
            self.client_limits["max_connections_raised_from"] = limit.raised_from
        return limit.value

    def _provision(self, version: str) -> Installation:
        try:
            return provision(
                version,
                known=self.config.installations,
                cache_dir=self.config.cache_dir,
                allow_download=self.config.allow_download,
                registry=self.config.npm_registry,
            )
        except ProvisionError as exc:
            raise StageError("provision", str(exc)) from exc

    def _build(self, version: str, spec: BuildSpec) -> Build:
        """The installation of a recipe version: built now, or reused from the install cache.
        StageError "build" (the build's own stage and log tail in the message) on failure."""
        self._update(stage="build", version=version, line=f"building {spec.name}")

        def progress(update: BuildProgress) -> None:
            self._update(
                stage="build",
                version=version,
                build_stage=update.stage,
                line=update.line,
                compiled=update.compiled,
                elapsed_s=round(update.elapsed_s, 1),
            )

        try:
            build = ensure_build(
                spec,
                cache_dir=self.config.cache_dir,
                settings=self.config.build,
                progress=progress,
                stop=self.stop,
            )
        except BuildStopped as exc:
            raise Interrupted(str(exc)) from exc
        except BuildError as exc:
            raise StageError("build", failure_message(f"{version}: {exc}")) from exc
        self.builds.append(build)
        self.progress = {k: v for k, v in self.progress.items() if k not in BUILD_PROGRESS_KEYS}
        logger.info(
            "%s: %s %s", version, "reusing" if build.reused else "built", build.installation.bindir
        )
        return build

    def _initialise(self, run: VersionRun, index: int) -> None:
        with self._stage("initdb"):
            run.cluster.initdb()
        self._switch_to(run)
        with self._stage("setup"):
            run.settings, run.sources = run.cluster.settings()
            run.server_version = run.cluster.server_version()
            if self.db_user != SUPERUSER:
                run.cluster.job_role_create(self.db_user)
            if self.tablespaces is not None:
                try:
                    self.tablespaces.create(
                        run.cluster,
                        index=index,
                        role=None if self.db_user == SUPERUSER else self.db_user,
                    )
                except TablespaceError as exc:
                    raise StageError("setup", str(exc)) from exc
            try:
                run.evidence = ServerEvidence.probe(
                    run.cluster, preloaded=bool(run.cluster.preload)
                )
            except (ClusterError, ValueError) as exc:
                logger.warning("%s: no server evidence: %s", run.requested, exc)
            self._load(run)

    def _load(self, run: VersionRun) -> None:
        self._update(stage="setup", version=run.requested)
        workload = self.job.workload
        largest = max(self.job.clients)
        for statement in workload.setup:
            run.cluster.sql(
                substitute(statement, max_clients=largest),
                timeout=self.config.job_timeout_s,
                user=self.db_user,
                job=True,
            )
        if uses_builtin(workload):
            args = pgbench.init_argv(
                bindir=self.client_bindir,
                target=self._target(run),
                scale=self.job.scale or 1,
                tablespaces=self.job.tablespaces,
            )
            init = pgbench.Process(args, account=run.cluster.account, cwd=self.work)
            done = init.wait(timeout_s=self.config.job_timeout_s)
            run.init_output = done.output
            if done.returncode != 0:
                raise StageError("setup", f"pgbench -i failed:\n{done.output[-2000:]}")
            with contextlib.suppress(PgbenchParseError):
                run.init_timings = init_timings(parse_init_output(done.output))

    @contextlib.contextmanager
    def _stage(self, stage: str) -> Iterator[None]:
        try:
            yield
        except (ClusterError, ProvisionError, pgbench.PgbenchError) as exc:
            raise StageError(stage, str(exc)) from exc

    def _target(self, run: VersionRun) -> pgbench.Target:
        return pgbench.Target(
            host=str(run.cluster.socket_dir), port=run.cluster.port, user=self.db_user
        )

    def _switch_to(self, run: VersionRun | None) -> None:
        """Make `run`'s server the only one running (None: none)."""
        if self.running is run:
            return
        if self.running is not None:
            with self._stage("stop"):
                self.running.cluster.stop()
            self.running = None
        if run is not None:
            with self._stage("start"):
                run.cluster.start()
            self.running = run

    # --- measurements ---------------------------------------------------------------------------

    def _measure(self, step: Step, *, index: int, total: int) -> None:
        run = self.runs[step.series]
        self._update(
            stage=step.stage,
            version=step.version,
            clients=step.clients,
            repeat=step.repeat,
            step=index,
            steps=total,
            line="",
        )
        level = Level(
            clients=step.clients, repeat=step.repeat, threads=self.job.threads_for(step.clients)
        )
        measurement = LevelRun(
            job=self.job,
            cluster=run.cluster,
            target=self._target(run),
            bindir=self.client_bindir,
            client_version=self._client_version,
            work=self.work,
            processes=self.processes,
            on_line=self._on_line,
            timeout_s=self.config.job_timeout_s,
        )
        with self._stage(step.stage):
            self._switch_to(run)
            measurement.prepare(level)
        evidence = self._evidence(run, step)
        disks = self.tablespaces.counters() if self.tablespaces is not None else {}
        started = time.monotonic()
        with TelemetrySampler(data_dir=run.cluster.datadir) as sampler, self._stage(step.stage):
            figures = measurement.run(level, watch=sampler.watch, evidence=evidence)
        if self.tablespaces is not None:
            elapsed = time.monotonic() - started
            self.tablespaces.measured(step.series, disks, self.tablespaces.counters(), elapsed)
        self._check_stop()
        run.results.append(
            self._result(
                level,
                figures,
                sampler.samples(),
                evidence=evidence.payload() if evidence is not None else None,
            )
        )

    def _evidence(self, run: VersionRun, step: Step) -> LevelEvidence | None:
        """The measured pass's evidence: statistics and waits, no collector in the server's
        hot path (those run in the level's evidence pass)."""
        if run.evidence is None:
            return None
        return LevelEvidence(
            cluster=run.cluster,
            server=run.evidence,
            log_dir=self.work / "txlog" / f"{step.series}-{step.clients}-{step.repeat}",
            sampling_rate=1.0,
            client_version=self._client_version,
            collectors=False,
        )

    # --- the evidence passes --------------------------------------------------------------------

    def _evidence_passes(self, run: VersionRun) -> None:
        """One extra, unmeasured pass per level after the sweep, with pg_stat_statements and
        pgbench's sampled per-transaction log on: the collectors that would slow the measured
        passes. Their top statements and latency go into the evidence of that level's first
        repeat. Nothing fails for want of them."""
        if run.evidence is None:
            return
        for clients in sorted(set(self.job.clients)):
            targets = [r for r in run.results if r["clients"] == clients and "evidence" in r]
            if not targets:
                continue
            self._check_stop()
            target = min(targets, key=lambda r: r["repeat"])["evidence"]
            if not self.config.evidence_pass:
                for name in PASS_PARTS:
                    target.setdefault("unavailable", {})[name] = "evidence passes are off"
                continue
            try:
                parts = self._evidence_pass(run, clients)
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

    def _evidence_pass(self, run: VersionRun, clients: int) -> dict[str, Any]:
        if run.evidence is None:
            raise StageError("evidence", "the server gave no evidence")
        self._update(stage="evidence", version=run.requested, clients=clients, line="")
        job, duration = self._extra_pass_job(clients)
        expected = self._expected_transactions(run, clients, duration_s=duration)
        evidence = LevelEvidence(
            cluster=run.cluster,
            server=run.evidence,
            log_dir=self.work / "txlog" / f"evidence-{clients}",
            sampling_rate=sampling_rate(expected),
            client_version=self._client_version,
        )
        measurement = self._extra_level_run(run, job)
        level = Level(clients=clients, repeat=0, threads=self.job.threads_for(clients))
        with self._stage("evidence"):
            self._switch_to(run)
            measurement.prepare(level)
            run.evidence.tracking(run.cluster, on=True)
            try:
                measurement.run(level, watch=lambda pid: None, evidence=evidence)
            finally:
                run.evidence.tracking(run.cluster, on=False)
        return evidence.payload()

    def _extra_pass_job(self, clients: int) -> tuple[JobSpec, float | None]:
        """The job as an unmeasured pass at `clients` runs it: a long level (and its warm-up)
        cut to EXTRA_PASS_MAX_S; and that level's duration in seconds (None: a -t job)."""
        duration = self.job.duration_for(clients)
        cut = min(duration, EXTRA_PASS_MAX_S) if duration else None
        job = dataclasses.replace(
            self.job,
            warmup_s=min(self.job.warmup_s, EXTRA_PASS_MAX_S),
            level_durations={**self.job.level_durations, **({clients: cut} if cut else {})},
        )
        return job, cut

    def _extra_level_run(self, run: VersionRun, job: JobSpec) -> LevelRun:
        return LevelRun(
            job=job,
            cluster=run.cluster,
            target=self._target(run),
            bindir=self.client_bindir,
            client_version=self._client_version,
            work=self.work,
            processes=self.processes,
            on_line=lambda line: None,
            timeout_s=self.config.job_timeout_s,
        )

    def _expected_transactions(
        self, run: VersionRun, clients: int, *, duration_s: float | None = None
    ) -> float | None:
        """How many transactions a pass of `duration_s` (default: the level's) at `clients`
        will run, from the job (-t) or from the last result at that level (None: not known)."""
        if self.job.transactions_per_client is not None:
            return float(self.job.transactions_per_client * clients)
        duration = duration_s or self.job.duration_for(clients) or 0.0
        for result in reversed(run.results):
            if result["clients"] == clients and result.get("tps"):
                return float(result["tps"]) * duration
        return None

    # --- the profile ----------------------------------------------------------------------------

    def _profile(self, run: VersionRun) -> None:
        """A perf profile of the server in an extra, unmeasured pass at the job's
        profile_clients level (the largest by default), after the sweep; it goes into the
        evidence of that level's first repeat. Nothing fails for want of it."""
        clients = self.job.profile_clients or max(self.job.clients)
        targets = [r for r in run.results if r["clients"] == clients and "evidence" in r]
        if not targets:
            return
        target = min(targets, key=lambda r: r["repeat"])
        evidence = target["evidence"]
        try:
            evidence["profile"] = self._profile_pass(run, clients)
        except (ProfileError, ClusterError, StageError, pgbench.PgbenchError) as exc:
            logger.info("%s: no profile: %s", run.requested, exc)
            evidence.setdefault("unavailable", {})["profile"] = str(exc)[:500]

    def _profile_pass(self, run: VersionRun, clients: int) -> dict[str, Any]:
        why = Profiler.available() if self.config.profile else "profiling is off on this host"
        if why is not None:
            raise ProfileError(why)
        self._update(stage="profile", version=run.requested, clients=clients, line="")
        # The pass only needs enough samples: a long level is cut to EXTRA_PASS_MAX_S.
        job, _ = self._extra_pass_job(clients)
        measurement = self._extra_level_run(run, job)
        level = Level(clients=clients, repeat=0, threads=self.job.threads_for(clients))
        profiler = Profiler(work=self.work)
        with self._stage("profile"):
            self._switch_to(run)
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

    def _on_line(self, line: str) -> None:
        if line.startswith("progress:"):
            self._update(line=line)

    def _result(
        self,
        level: Level,
        figures: list[StreamFigures],
        samples: list[dict[str, Any]],
        *,
        evidence: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        workload = self.job.workload
        explicit = bool(workload.streams)
        if explicit:
            parsed = level_figures(figures, combine=workload.combine)
        else:
            parsed = figures[0].outputs[0]
        measured = [f for f in figures if f.stream.measured]
        client_threads = sum(f.threads or 1 for f in measured for _ in f.outputs)
        result = result_payload(
            parsed=parsed,
            clients=level.clients,
            repeat=level.repeat,
            threads=measured[0].threads or level.threads,
            raw_output="".join(part for f in measured for part in f.raw),
            telemetry=samples,
            client_bound=client_bound(samples, client_threads=client_threads),
            evidence=evidence,
        )
        if explicit:
            result["streams"] = [f.to_payload() for f in figures]
        result["duration_s"] = self.job.duration_for(level.clients)
        return result

    # --- payloads -------------------------------------------------------------------------------

    def _partial(self, step: Step, error: StageError) -> list[dict[str, Any]]:
        """The runs measured before the sweep failed at `step`, each marked partial."""
        stopped = {
            "stage": error.stage[:100],
            "reason": str(error)[:10000],
            "clients": step.clients,
        }
        measured = [run for run in self.runs.values() if run.results]
        for run in measured:
            run.stopped = stopped
        with contextlib.suppress(Exception):
            self.stop_all()  # before the host facts are read; the servers are done anyway
        try:
            return self._payloads(measured)
        except Exception:
            # The failure being reported matters more than what it leaves behind.
            logger.exception("job %s: could not build the partial runs", self.job.id)
            return []

    def _payloads(self, runs: list[VersionRun] | None = None) -> list[dict[str, Any]]:
        # The token decides the host; the claim says which it is.
        name = self.job.claimed_host or self.config.host
        host = {"name": name, **host_facts(work_dir=self.work)}
        finished = dt.datetime.now(dt.UTC)
        client = ".".join(str(n) for n in self._client_version)
        return [
            run_payload(
                job=self.job,
                run=run,
                host=host,
                finished_at=finished,
                pgbench_version=client,
                client_limits=self.client_limits,
                tablespaces=self.tablespaces.evidence(index) if self.tablespaces else [],
            )
            for index, run in self.runs.items()
            if runs is None or any(run is chosen for chosen in runs)
        ]
