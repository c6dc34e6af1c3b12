"""Running one claimed job: provision, one cluster per version, load, sweep, parse, spool.

Order of work. Every version gets its own cluster in the job's work directory, initialised and
loaded once. Only one server runs at a time (the published experiments insist on it): before a
measurement the agent starts that version's server (if it is not the one running), takes a
checkpoint, runs pgbench with `-P 1 -r` while sampling the OS, and parses the output. With
several versions the steps are interleaved by default (for each level and repeat, each version in
turn), so drift on the host (thermal, background jobs, SSD garbage collection) spreads evenly.

Failures carry their stage (provision, initdb, start, setup, `level c=N repeat=R version=V`,
upload) so the server can say where a job broke. An aborted pgbench run is not a failure of the
job: it is stored as an aborted result with its errors.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
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
from .cluster import Cluster, ClusterError, free_port
from .config import Config
from .parse import PgbenchParseError, parse_init_output, parse_run_output
from .payload import init_timings, result_payload, run_payload
from .provision import Installation, ProvisionError, provision
from .sysinfo import host_facts
from .telemetry import TelemetrySampler, client_bound

logger = logging.getLogger(__name__)

# pgbench gets this long beyond its -T before the watchdog stops it.
MEASUREMENT_SLACK_S = 120.0


class StageError(Exception):
    """The job failed at `stage`; the message is for the person who queued it."""

    def __init__(self, stage: str, message: str) -> None:
        self.stage = stage
        super().__init__(message)


class Interrupted(Exception):
    """The job was cancelled, its lease was lost, or the agent is stopping."""


@dataclass(frozen=True)
class Step:
    version: str
    clients: int
    repeat: int

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


def stale_clusters_stop(jobs_dir: Path) -> int:
    """Kill the servers of jobs an earlier agent left running (it was SIGKILLed) and remove
    their directories; returns how many servers were killed. Called with the host lock held, so
    no live job of this host is touched."""
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
        shutil.rmtree(directory, ignore_errors=True)
    return killed


def plan(job: dict[str, Any]) -> list[Step]:
    """Every measurement of the job, in the order it runs."""
    levels = [(c, r) for c in job["clients"] for r in range(1, job["repeats"] + 1)]
    if job.get("order") == "sequential":
        return [Step(v, c, r) for v in job["versions"] for c, r in levels]
    return [Step(v, c, r) for c, r in levels for v in job["versions"]]


def threads_for(job: dict[str, Any], clients: int) -> int:
    if job.get("threads_policy") == "fixed":
        # pgbench refuses more threads than clients.
        return min(int(job["threads"]), clients)
    return clients


class JobRunner:
    """Runs one job; `execute()` returns the upload payloads, one per version.

    `report(progress)` is called with live progress for heartbeats and the terminal; `stop` is
    set from outside (cancel, lost lease, signal) and ends the job at the next chance.
    """

    def __init__(
        self,
        *,
        job: dict[str, Any],
        config: Config,
        stop: threading.Event,
        report: Callable[[dict[str, Any]], None],
    ) -> None:
        self.job = job
        self.config = config
        self.stop = stop
        self.report = report
        self.work = config.work_dir / "jobs" / f"{job['id']}-{job['attempt']}"
        self.runs: dict[str, VersionRun] = {}
        self.running: VersionRun | None = None
        self.process: pgbench.Process | None = None
        self.progress: dict[str, Any] = {"stage": "provision"}
        self.watchdog_fired = False
        self._client_version: tuple[int, int] = (0, 0)

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
                self._measure(step, index=index, total=len(steps))
            self._switch_to(None)
            return self._payloads()
        finally:
            watchdog.cancel()
            self.stop_all()

    def _watchdog(self) -> None:
        logger.error(
            "job %s ran past job_timeout_s=%s: stopping it",
            self.job["id"],
            self.config.job_timeout_s,
        )
        self.watchdog_fired = True
        self.stop.set()
        self.stop_all()

    def stop_all(self) -> None:
        """Stop pgbench and every server; safe to call from a signal handler, and twice."""
        if self.process is not None:
            self.process.stop()
        for run in self.runs.values():
            with contextlib.suppress(Exception):
                run.cluster.stop()
        self.running = None

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise Interrupted("stopped")

    def _update(self, **progress: Any) -> None:
        self.progress = {**self.progress, **progress}
        self.report(dict(self.progress))

    # --- preparation: provision, initdb, load ---------------------------------------------------

    def _prepare(self) -> None:
        bindir = self.config.client_bindir
        if bindir is None or not (bindir / "pgbench").exists() or not (bindir / "psql").exists():
            raise StageError(
                "provision",
                f"no pgbench client: {bindir} lacks pgbench or psql; "
                "set client_bindir in the agent's configuration",
            )
        self._client_version = pgbench.client_version(bindir)
        self.work.mkdir(parents=True, exist_ok=True)
        self.work.chmod(0o755)
        for index, version in enumerate(self.job["versions"]):
            self._check_stop()
            self._update(stage="provision", version=version)
            installation = self._provision(version)
            overrides = dict(self.job.get("config_overrides") or {})
            # The cluster writes max_connections in its base configuration; a job asks for more
            # (the idle-connection experiments) through the same overrides.
            max_connections = int(overrides.pop("max_connections", 100))
            with self._stage("initdb"):
                cluster = Cluster(
                    installation=installation,
                    client_bindir=bindir,
                    workdir=self.work / f"v{index}",
                    port=free_port(),
                    max_connections=max_connections,
                    overrides=overrides,
                )
            self.runs[version] = run = VersionRun(
                requested=version, installation=installation, cluster=cluster
            )
            self._initialise(run)

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

    def _initialise(self, run: VersionRun) -> None:
        with self._stage("initdb"):
            run.cluster.initdb()
        self._switch_to(run)
        with self._stage("setup"):
            run.settings, run.sources = run.cluster.settings()
            run.server_version = run.cluster.server_version()
            self._load(run)

    def _load(self, run: VersionRun) -> None:
        self._update(stage="setup", version=run.requested)
        workload = self.job["workload"]
        for statement in workload.get("setup", []):
            run.cluster.sql(statement, timeout=self.config.job_timeout_s)
        if workload.get("builtin") or any(s.get("builtin") for s in workload.get("scripts", [])):
            args = pgbench.init_argv(
                bindir=self.config.client_bindir,
                target=self._target(run),
                scale=self.job.get("scale") or 1,
            )
            done = pgbench.Process(args).wait(timeout_s=self.config.job_timeout_s)
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
        return pgbench.Target(host=str(run.cluster.socket_dir), port=run.cluster.port)

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
        run = self.runs[step.version]
        self._update(
            stage=step.stage,
            version=step.version,
            clients=step.clients,
            repeat=step.repeat,
            step=index,
            steps=total,
            line="",
        )
        with self._stage(step.stage):
            self._switch_to(run)
            run.cluster.checkpoint()
        measurement = self._measurement(step)
        args = pgbench.argv(
            bindir=self.config.client_bindir,
            target=self._target(run),
            m=measurement,
            version=self._client_version,
        )
        limit = (measurement.duration_s or self.config.job_timeout_s) + MEASUREMENT_SLACK_S
        with TelemetrySampler(data_dir=run.cluster.datadir) as sampler:
            self.process = pgbench.Process(args, on_line=self._on_line)
            sampler.watch(self.process.pid)
            done = self.process.wait(timeout_s=limit)
            self.process = None
        self._check_stop()
        run.results.append(self._result(step, measurement, done, sampler.samples()))

    def _measurement(self, step: Step) -> pgbench.Measurement:
        workload = self.job["workload"]
        scripts = self._script_files(workload)
        return pgbench.Measurement(
            clients=step.clients,
            threads=threads_for(self.job, step.clients),
            duration_s=self.job.get("duration_s"),
            transactions_per_client=self.job.get("transactions_per_client"),
            builtin=workload.get("builtin", "") if not scripts else "",
            scripts=scripts,
            query_mode=workload.get("query_mode", "simple"),
            options=list(workload.get("options", [])),
            no_vacuum=not workload.get("builtin"),
        )

    def _script_files(self, workload: dict[str, Any]) -> list[tuple[Path, int]]:
        files = []
        for number, script in enumerate(workload.get("scripts", []), start=1):
            if script.get("builtin"):
                continue
            path = self.work / f"script-{number}.sql"
            path.write_text(pgbench.script_for_client(script["body"], self._client_version))
            path.chmod(0o644)
            files.append((path, int(script.get("weight", 1))))
        return files

    def _on_line(self, line: str) -> None:
        if line.startswith("progress:"):
            self._update(line=line)

    def _result(
        self,
        step: Step,
        m: pgbench.Measurement,
        done: pgbench.Execution,
        samples: list[dict[str, Any]],
    ) -> dict[str, Any]:
        try:
            parsed = parse_run_output(done.output).to_dict()
        except PgbenchParseError as exc:
            parsed = {
                "aborted": True,
                "errors": [
                    f"pgbench exited {done.returncode}: {exc}",
                    *done.output.strip().splitlines()[-5:],
                ],
            }
        if done.stopped:
            parsed["aborted"] = True
            parsed.setdefault("errors", []).append("stopped by the agent's watchdog")
        cores = os.cpu_count() or 0
        return result_payload(
            parsed=parsed,
            clients=step.clients,
            repeat=step.repeat,
            threads=m.threads,
            raw_output=done.output,
            telemetry=samples,
            client_bound=client_bound(samples, cores=cores, client_threads=m.threads)
            if samples and cores
            else None,
        )

    # --- payloads -------------------------------------------------------------------------------

    def _payloads(self) -> list[dict[str, Any]]:
        # The token decides the host; the claim says which it is.
        name = self.job.get("claimed_host") or self.config.host
        host = {"name": name, **host_facts(work_dir=self.work)}
        finished = dt.datetime.now(dt.UTC)
        client = ".".join(str(n) for n in self._client_version)
        return [
            run_payload(
                job=self.job, run=run, host=host, finished_at=finished, pgbench_version=client
            )
            for run in self.runs.values()
        ]
