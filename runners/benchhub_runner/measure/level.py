"""One measurement: a client level of one version, one repeat, with all of its streams.

Order: per-level setup (`level_setup`, `{clients}` replaced), a checkpoint, the background
streams (started first; the measurement waits until their connections are open), the warm-up
(the measured streams run for the job's `warmup_s`, their figures dropped: with versions
interleaved every measurement starts on a freshly started server, cold buffers and an empty plan
cache), then every measured stream's processes at once, for the level's duration (the job's
`level_durations` or its `duration_s`), then the background streams are stopped and their server
backends terminated (a backend sleeping in `pg_sleep` does not notice its client has gone, and
would hold its slot into the next level). Processes are named through `application_name`
(PGAPPNAME) so the agent can count and end them in `pg_stat_activity`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..jobspec.spec import JobSpec
from ..jobspec.workload import Stream, Workload
from ..parse import PgbenchParseError, parse_run_output
from ..servers.cluster import Cluster, ClusterError
from . import pgbench
from .streams import StreamFigures, substitute, workload_streams

# pgbench gets this long beyond its -T before the watchdog stops it.
MEASUREMENT_SLACK_S = 120.0
# How long background connections may take to open: a base plus a little per connection.
ESTABLISH_BASE_S = 30.0
ESTABLISH_PER_CONNECTION_S = 0.02
APP_PREFIX = "benchhub-"

logger = logging.getLogger(__name__)


class Measuring(Protocol):
    """What watches a measurement from inside the server (evidence.Measuring, the profile
    pass): begun just before the measured streams start, ended when they are done, and asked
    where each measured pgbench writes its per-transaction log (None: no log)."""

    sampling_rate: float

    def begin(self) -> None: ...

    def end(self) -> None: ...

    def log_prefix(self, name: str) -> Path | None: ...


@dataclass(frozen=True)
class Level:
    clients: int
    repeat: int
    threads: int  # the job's threads policy at this level


class LevelRun:
    """Runs the streams of one measurement; `processes` is shared with the agent's stop path."""

    def __init__(
        self,
        *,
        job: JobSpec,
        cluster: Cluster,
        target: pgbench.Target,
        bindir: Path,
        client_version: tuple[int, int],
        work: Path,
        processes: list[pgbench.Process],
        on_line: Callable[[str], None],
        timeout_s: float,
    ) -> None:
        self.job = job
        self.workload = job.workload
        self.cluster = cluster
        self.target = target
        self.bindir = bindir
        self.client_version = client_version
        self.work = work
        self.processes = processes
        self.on_line = on_line
        self.timeout_s = timeout_s
        self._evidence: Measuring | None = None

    def prepare(self, level: Level) -> None:
        """Per-level setup, then a checkpoint so every level starts from the same state."""
        for statement in self.workload.level_setup:
            self.cluster.sql(
                substitute(statement, clients=level.clients),
                timeout=self.timeout_s,
                user=self.target.user,
                job=True,
            )
        self.cluster.checkpoint()

    def run(
        self,
        level: Level,
        *,
        watch: Callable[[int], None],
        evidence: Measuring | None = None,
    ) -> list[StreamFigures]:
        """Run every stream; `watch(pid)` is called for each measured pgbench process, and
        `evidence` begins just before the measured streams start and ends when they are done."""
        streams = workload_streams(self.workload)
        self._evidence = evidence
        background: list[tuple[StreamFigures, list[pgbench.Process]]] = []
        measured: list[tuple[StreamFigures, list[pgbench.Process]]] = []
        try:
            for stream in streams:
                if not stream.measured:
                    background.append(self._background(stream, level))
            if self.job.warmup_s > 0:
                self._warm_up(streams, level)
            if evidence is not None:
                evidence.begin()
            try:
                for stream in streams:
                    if stream.measured:
                        measured.append(self._start(stream, level, first=not measured))
                for _, processes in measured:
                    for process in processes:
                        watch(process.pid)
                limit = (self.job.duration_for(level.clients) or self.timeout_s) + (
                    MEASUREMENT_SLACK_S
                )
                deadline = time.monotonic() + limit
                for figures, processes in measured:
                    for process in processes:
                        done = process.wait(timeout_s=max(1.0, deadline - time.monotonic()))
                        self._collect(figures, done)
            finally:
                if evidence is not None:
                    evidence.end()
        finally:
            self._evidence = None
            self._stop_background(background)
            for _, processes in [*measured, *background]:
                for process in processes:
                    if process in self.processes:
                        self.processes.remove(process)
        return [figures for figures, _ in background] + [figures for figures, _ in measured]

    def _warm_up(self, streams: tuple[Stream, ...], level: Level) -> None:
        """Run the measured streams for `warmup_s` and drop what they measured. A warm-up that
        fails is only logged: the measurement that follows runs the same scripts and records
        the failure as its own."""
        started = [self._start(s, level, warmup=True) for s in streams if s.measured]
        deadline = time.monotonic() + self.job.warmup_s + MEASUREMENT_SLACK_S
        try:
            for _, processes in started:
                for process in processes:
                    done = process.wait(timeout_s=max(1.0, deadline - time.monotonic()))
                    if done.returncode != 0:
                        logger.warning(
                            "warm-up at c=%s exited %s: %s",
                            level.clients,
                            done.returncode,
                            " / ".join(done.output.strip().splitlines()[-3:]),
                        )
        finally:
            for _, processes in started:
                for process in processes:
                    if process in self.processes:
                        self.processes.remove(process)

    # --- starting streams -----------------------------------------------------------------------

    def _start(
        self, stream: Stream, level: Level, *, first: bool = False, warmup: bool = False
    ) -> tuple[StreamFigures, list[pgbench.Process]]:
        clients = stream.level_clients(level.clients)
        if stream.per_client:
            threads, count, per_process = 1, clients, 1
        else:
            threads = min(stream.threads or level.threads, clients)
            count, per_process = 1, clients
        figures = StreamFigures(stream=stream, clients=clients, threads=threads)
        processes: list[pgbench.Process] = []
        for number in range(1, count + 1):
            measurement = self._measurement(
                stream,
                clients=per_process,
                threads=threads,
                n=number,
                duration=self.job.warmup_s if warmup else self.job.duration_for(level.clients),
                warmup=warmup,
            )
            if self._evidence is not None and stream.measured and not warmup:
                measurement.log_prefix = self._evidence.log_prefix(f"{stream.name}-{number}")
                measurement.sampling_rate = self._evidence.sampling_rate
            args = pgbench.argv(
                bindir=self.bindir, target=self.target, m=measurement, version=self.client_version
            )
            on_line = self.on_line if first and number == 1 and not warmup else None
            process = pgbench.Process(
                args,
                env={"PGAPPNAME": self._app(stream)},
                on_line=on_line,
                account=self.cluster.account,
                cwd=self.work,
            )
            self.processes.append(process)
            processes.append(process)
        return figures, processes

    def _measurement(
        self,
        stream: Stream,
        *,
        clients: int,
        threads: int,
        n: int,
        duration: float | None,
        warmup: bool = False,
    ) -> pgbench.Measurement:
        scripts = self._script_files(stream, n=n)
        background = not stream.measured
        if background:
            # Held open past the measured streams; the agent stops it when they end.
            duration = (duration or self.timeout_s) + self.job.warmup_s + MEASUREMENT_SLACK_S
        return stream_measurement(
            self.workload,
            stream,
            clients=clients,
            threads=threads,
            scripts=scripts,
            duration_s=duration,
            transactions_per_client=None
            if background or warmup
            else self.job.transactions_per_client,
            quiet=background or warmup,
        )

    def _script_files(self, stream: Stream, *, n: int) -> list[tuple[Path, int]]:
        files = []
        for number, script in enumerate(stream.scripts, start=1):
            if script.builtin:
                continue
            body = substitute(script.body, n=n) if stream.per_client else script.body
            suffix = f"-{n}" if stream.per_client else ""
            path = self.work / f"script-{stream.name}-{number}{suffix}.sql"
            # UTF-8 whatever the agent's locale: the job-code checker lexes these bytes.
            path.write_text(pgbench.script_for_client(body, self.client_version), encoding="utf-8")
            path.chmod(0o644)
            files.append((path, script.weight))
        return files

    def _app(self, stream: Stream) -> str:
        return f"{APP_PREFIX}{stream.role}-{stream.name}"[:63]

    # --- background streams ---------------------------------------------------------------------

    def _background(
        self, stream: Stream, level: Level
    ) -> tuple[StreamFigures, list[pgbench.Process]]:
        figures, processes = self._start(stream, level)
        wanted = figures.clients
        deadline = time.monotonic() + ESTABLISH_BASE_S + wanted * ESTABLISH_PER_CONNECTION_S
        established = 0
        while time.monotonic() < deadline:
            established = self._connections(stream)
            if established >= wanted or any(p.popen.poll() is not None for p in processes):
                break
            time.sleep(0.5)
        figures.established = established
        if established < wanted:
            figures.problems.append(
                f"background stream {stream.name} had {established} of {wanted} connections "
                "open when the measurement began"
            )
        return figures, processes

    def _connections(self, stream: Stream) -> int:
        app = self._app(stream).replace("'", "''")
        # Stream names are validated (letters, digits, . _ : @ -) and quotes doubled.
        query = f"SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"  # noqa: S608
        try:
            out = self.cluster.sql(
                query,
                timeout=30,
            )
        except ClusterError:
            return 0
        return int(out.strip() or 0)

    def _stop_background(
        self, background: list[tuple[StreamFigures, list[pgbench.Process]]]
    ) -> None:
        for figures, processes in background:
            for process in processes:
                if process.popen.poll() is not None:
                    done = process.wait(timeout_s=5)
                    figures.problems.append(
                        f"background stream {figures.stream.name} ended before the measurement "
                        f"did (exit {done.returncode}): "
                        + " / ".join(done.output.strip().splitlines()[-3:])
                    )
                    continue
                process.stop()
                figures.raw.append(process.wait(timeout_s=10).output)
        if background:
            self._terminate_backends()

    def _terminate_backends(self) -> None:
        """End the server backends of stopped background streams, and wait until they are gone."""
        query = (
            "SELECT count(pg_terminate_backend(pid)) FROM pg_catalog.pg_stat_activity "
            "WHERE application_name LIKE 'benchhub-background-%'"
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if int(self.cluster.sql(query, timeout=30).strip() or 0) == 0:
                    return
            except ClusterError:
                return
            time.sleep(0.5)

    # --- results --------------------------------------------------------------------------------

    def _collect(self, figures: StreamFigures, done: pgbench.Execution) -> None:
        figures.outputs.append(parsed_output(done))
        header = f"### stream {figures.stream.name}: {' '.join(done.argv)}\n"
        figures.raw.append(header + done.output if figures.stream.per_client else done.output)


def parsed_output(done: pgbench.Execution) -> dict[str, Any]:
    """The parser's view of one pgbench execution; one it cannot read, or that the agent
    stopped, is aborted with its last lines as errors."""
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
    return parsed


def stream_measurement(
    workload: Workload,
    stream: Stream,
    *,
    clients: int,
    threads: int,
    scripts: list[tuple[Path, int]],
    duration_s: float | None,
    transactions_per_client: int | None,
    quiet: bool,
) -> pgbench.Measurement:
    """One pgbench process of a stream, its script files written (`scripts`: path, weight).
    `quiet` (a background stream, a warm-up): no progress and no per-statement latencies."""
    return pgbench.Measurement(
        clients=clients,
        threads=threads,
        duration_s=duration_s,
        transactions_per_client=transactions_per_client,
        # Every script the stream names runs: its builtin, its weighted builtins and its
        # custom scripts, all in one pgbench (it picks each transaction's script by weight).
        builtin=stream.builtin,
        builtins=[(s.builtin, s.weight) for s in stream.scripts if s.builtin],
        scripts=scripts,
        query_mode=workload.query_mode,
        options=list(workload.options),
        progress_s=0 if quiet else workload.progress_s,
        per_statement=not quiet,
        # pgbench vacuums its own tables first, which only a builtin script has.
        no_vacuum=not (stream.builtin or any(s.builtin for s in stream.scripts)),
    )
