"""The agent's loop: take the host lock, flush the spool, claim, run with heartbeats, deliver.

Before a job runs, its code is checked (jobcode/checker.py) unless the host's configuration trusts
job code from this server; a refused job fails at stage `job code` and nothing of it runs. One
benchmark at a time per host: the agent holds an exclusive lock on `<work_dir>/agent.lock` while it
works. While a job runs, a heartbeat thread renews the lease every few seconds with the live
progress; a heartbeat that says "cancel", or a lost lease, stops the job. Ctrl-C, SIGTERM and SIGHUP
stop pgbench and every server, give the job back to the queue, and exit; a second signal changes
nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..build import BuildError, BuildProgress, BuildStopped, commit_range
from ..config import Config
from ..job.cleanup import stale_clusters_stop
from ..job.errors import Interrupted, StageError
from ..job.runner import JobRunner
from ..jobcode.checker import job_code_check
from ..jobcode.refusals import Refusal, refusals_text
from ..jobspec.spec import JobSpec, JobSpecError, job_parse
from ..sandbox.bubblewrap import probe as sandbox_probe
from ..transport.client import ApiError, Client, Unreachable
from ..transport.spool import Spool
from .progress import ProgressView

logger = logging.getLogger(__name__)

# Between rounds of delivery while the server is away (each round retries with backoff too).
RETRY_PAUSE_S = 5.0


class AgentBusy(Exception):
    """Another agent holds this host's benchmark lock."""


@contextlib.contextmanager
def host_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AgentBusy(f"another benchmark holds {path}; one at a time per host") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield


class Agent:
    def __init__(
        self, *, config: Config, client: Client | None = None, view: ProgressView | None = None
    ) -> None:
        self.config = config
        self.client = client or Client(server=config.server, token=config.token)
        self.spool = Spool(config.spool_dir, max_tries=config.spool_max_tries)
        self.shutdown = threading.Event()  # the agent is stopping (signal)
        self.halt = threading.Event()  # the current job must stop
        self.view = view or ProgressView()
        self.runner: JobRunner | None = None
        self.beat: threading.Thread | None = None  # the current job's heartbeat thread
        self.outcome = ""
        # Once, at start: whether job code can run in a sandbox here (sandbox/bubblewrap.py).
        self.sandbox_missing = sandbox_probe()
        if self.sandbox_missing is None:
            logger.info("job code runs in a bubblewrap sandbox per program of each job")
        elif not config.trust_job_code:
            logger.warning(
                "no sandbox for job code (%s): this host refuses every job", self.sandbox_missing
            )

    # --- signals ----------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        # SIGHUP too: a closed terminal or a dropped ssh session stops the agent as Ctrl-C does,
        # its job's server and pgbench with it, rather than killing it outright.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        logger.warning("received %s: stopping", signal.Signals(signum).name)
        self.outcome = "stopped"
        self.shutdown.set()
        self._halt()

    # --- delivery ---------------------------------------------------------------------------

    def deliver(self, *, wait_s: float = 0.0) -> bool:
        """Send spooled runs; retry for up to `wait_s` while the server is away. True if empty."""
        deadline = time.monotonic() + wait_s
        while True:
            report = self.spool.flush(self.client)
            for run in report.sent:
                logger.info("delivered run %s", run)
            self.report_set_aside()
            if not report.waiting:
                return True
            if time.monotonic() >= deadline or self.shutdown.is_set():
                logger.warning(
                    "%d run(s) wait in %s for the server", len(report.waiting), self.spool.directory
                )
                return False
            self.shutdown.wait(min(RETRY_PAUSE_S, max(1.0, deadline - time.monotonic())))

    def report_set_aside(self) -> None:
        """Tell the server which runs the spool set aside, when that changed since the last
        report it took (kept in the spool, so a restarted agent does not repeat it)."""
        entries = [entry.to_report() for entry in self.spool.set_aside()][-50:]
        marker = self.spool.directory / ".set-aside-reported"
        digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()
        try:
            last = marker.read_text().strip()
        except OSError:
            last = ""
        if digest == last or (not entries and not last):
            return
        try:
            self.client.spool_report(entries)
        except (ApiError, Unreachable) as exc:
            logger.warning("could not report the runs set aside: %s", exc)
            return
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(digest + "\n")

    # --- one job ----------------------------------------------------------------------------

    def once(self, *, deliver_wait_s: float = 600.0) -> str:
        """Claim and run at most one job; returns 'idle', 'done', 'failed', 'cancelled', ..."""
        with host_lock(self.config.work_dir / "agent.lock"):
            stale_clusters_stop(self.config.work_dir / "jobs", tablespaces=self.config.tablespaces)
            self.spool.private()
            self.deliver(wait_s=0)
            try:
                claim = self.client.claim(
                    tablespaces=sorted(self.config.tablespaces), tags=self.config.tags
                )
            except Unreachable as exc:
                logger.error("cannot reach the server: %s", exc)
                return "unreachable"
            if claim is None:
                return "idle"
            try:
                job = job_parse(claim)
            except JobSpecError as exc:
                return self._refuse(exc)
            if job.bisect_range is not None:
                return self._list_range(job)
            if not self.config.trust_job_code and self.sandbox_missing is not None:
                return self._refuse_unconfined(job)
            if not self.config.trust_job_code:
                refused = job_code_check(
                    workload=job.workload.definition, config_overrides=job.config_overrides
                )
                if refused:
                    return self._refuse_code(job, refused)
            return self._run(job, deliver_wait_s=deliver_wait_s)

    def run_forever(self) -> None:
        while not self.shutdown.is_set():
            outcome = self.once()
            if outcome in ("idle", "unreachable", "spooled"):
                self.shutdown.wait(self.config.poll_interval_s)

    def _refuse(self, error: JobSpecError) -> str:
        """A claimed job the agent cannot read fails at stage `claim`, naming the field; one
        without a readable id cannot be reported, and its lease runs out."""
        logger.error("claimed a job the agent cannot run: %s", error)
        if error.job_id is None:
            return "failed"
        return self._finish(
            error.job_id, "failed", "claim", f"the agent cannot read the job: {error}"
        )

    def _refuse_code(self, job: JobSpec, refused: list[Refusal]) -> str:
        """A job whose code this host does not run fails before anything of it runs, at stage
        `job code`, naming each field, line and reason (jobcode/checker.py)."""
        message = f"this host refuses the job's code: {refusals_text(refused)}"
        logger.error("job %s: %s", job.id, message)
        return self._finish(job.id, "failed", "job code", message)

    def _refuse_unconfined(self, job: JobSpec) -> str:
        """A host that cannot sandbox job code runs none it does not trust: the job fails at
        stage `sandbox` before anything of it runs, saying why and what would do."""
        message = (
            f"this host cannot run job code in a sandbox ({self.sandbox_missing}), and does not "
            "run untrusted job code unconfined; run the agent as root with bubblewrap "
            "(/usr/bin/bwrap) on a kernel that allows user namespaces, or set trust_job_code"
        )
        logger.error("job %s: %s", job.id, message)
        return self._finish(job.id, "failed", "sandbox", message)

    def _run(self, job: JobSpec, *, deliver_wait_s: float) -> str:
        logger.info(
            "job %s attempt %s: %s, clients %s",
            job.id,
            job.attempt,
            " vs ".join(job.versions),
            list(job.clients),
        )
        self.halt = threading.Event()
        self.outcome = ""
        latest: dict[str, Any] = {}

        def report(progress: dict[str, Any]) -> None:
            latest.clear()
            latest.update(progress)
            self.view.show(progress)

        self.runner = JobRunner(job=job, config=self.config, stop=self.halt, report=report)
        self._start_heartbeats(job.id, latest)
        try:
            payloads = self.runner.execute()
        except (StageError, Interrupted) as exc:
            if self.runner.watchdog_fired:
                return self._fail(
                    job,
                    "watchdog",
                    f"the job ran past job_timeout_s="
                    f"{self.config.job_timeout_s:g} s and was stopped",
                )
            if self.halt.is_set():  # a stop (cancel, signal, lost lease) caused the failure
                return self._interrupted(job)
            assert isinstance(exc, StageError)
            # What the sweep measured before it failed is uploaded as partial runs first.
            for payload in exc.payloads:
                self.spool.put(payload)
            if exc.payloads:
                self.deliver(wait_s=deliver_wait_s)
            return self._fail(job, exc.stage, str(exc))
        except Exception as exc:
            logger.exception("job %s crashed", job.id)
            return self._fail(job, latest.get("stage", "agent"), f"{type(exc).__name__}: {exc}")
        finally:
            self.view.done()
            self.runner.cleanup()
        # Durable first: the runs are on disk before anything is sent.
        for payload in payloads:
            self.spool.put(payload)
        # Heartbeats go on while delivery waits for the server, so the lease holds.
        delivered = self.deliver(wait_s=deliver_wait_s)
        self._stop_heartbeats()
        if not delivered:
            return "spooled"
        ours = {str(payload["run_uuid"]) for payload in payloads}
        refused = [entry for entry in self.spool.set_aside() if entry.run_uuid in ours]
        if refused:
            # The runs are kept (spool/rejected/); the job says why the server has none.
            answers = "; ".join(
                f"run {e.run_uuid}: {e.status} {e.error} {e.detail}".strip() for e in refused
            )
            return self._fail(job, "upload", f"the server refused the results: {answers}")
        return self._finish(job.id, "done")

    def _list_range(self, job: JobSpec) -> str:
        """A bisection's listing job: the commits between its two refs, from the host's
        mirror of the repository, sent to the server; nothing is measured. A ref that does not
        resolve, or a fetch that fails, fails the job at stage `resolve`."""
        assert job.bisect_range is not None
        wanted = job.bisect_range
        logger.info("job %s: listing %s..%s of %s", job.id, wanted.good, wanted.bad, wanted.url)
        self.halt = threading.Event()
        self.outcome = ""
        self.runner = None  # nothing to stop but the listing, which watches `halt`
        latest: dict[str, Any] = {"stage": "resolve"}

        def progress(update: BuildProgress) -> None:
            latest.update(build_stage=update.stage, line=update.line[-200:])

        self._start_heartbeats(job.id, latest)
        try:
            found = commit_range(
                wanted.url,
                wanted.good,
                wanted.bad,
                cache_dir=self.config.cache_dir,
                settings=self.config.build,
                progress=progress,
                stop=self.halt,
            )
        except BuildStopped:
            return self._interrupted(job)
        except BuildError as exc:
            return self._fail(job, "resolve", str(exc))
        finally:
            self._stop_heartbeats()
        try:
            self.client.bisect_range(
                job.id,
                attempt=job.attempt,
                good=found.good,
                bad=found.bad,
                commits=[commit.as_dict() for commit in found.commits],
            )
        except ApiError as exc:
            return self._fail(job, "range", f"the server refused the range: {exc}")
        except Unreachable as exc:
            logger.error("could not send the range of job %s: %s", job.id, exc)
            return "unreachable"
        return self._finish(job.id, "done")

    def _start_heartbeats(self, job_id: int, latest: dict[str, Any]) -> None:
        # The thread watches its own job's event: one left behind by a job must never beat
        # for, or halt, the next one.
        self.beat = threading.Thread(
            target=self._heartbeats, args=(job_id, latest, self.halt), daemon=True
        )
        self.beat.start()

    def _stop_heartbeats(self) -> None:
        """Stop the current job's heartbeats and wait for one in flight, so no heartbeat
        reaches the server after the job's finish (which it would answer with a lost lease)."""
        self.halt.set()
        if self.beat is not None:
            self.beat.join(timeout=5)
            self.beat = None

    def _heartbeats(self, job_id: int, latest: dict[str, Any], halt: threading.Event) -> None:
        while not halt.wait(self.config.heartbeat_interval_s):
            try:
                reply = self.client.heartbeat(job_id, dict(latest))
            except ApiError as exc:
                if exc.status == 409:
                    logger.error("lost job %s: %s", job_id, exc)
                    self.outcome = "lost"
                    self._halt()
                    return
                logger.warning("heartbeat refused: %s", exc)
                continue
            except Unreachable as exc:
                logger.warning("heartbeat failed (will retry): %s", exc)
                continue
            if reply.get("cancel"):
                logger.warning("job %s was cancelled: stopping", job_id)
                self.outcome = "cancelled"
                self._halt()
                return

    def _halt(self) -> None:
        self.halt.set()
        if self.runner is not None:
            self.runner.stop_all()

    def _finish(self, job_id: int, outcome: str, stage: str = "", message: str = "") -> str:
        try:
            self.client.finish(job_id, outcome=outcome, stage=stage, message=message)
        except (ApiError, Unreachable) as exc:
            logger.error("could not report job %s as %s: %s", job_id, outcome, exc)
        return outcome

    def _fail(self, job: JobSpec, stage: str, message: str) -> str:
        logger.error("job %s failed at %s: %s", job.id, stage, message)
        self._stop_heartbeats()
        return self._finish(job.id, "failed", stage, message)

    def _interrupted(self, job: JobSpec) -> str:
        self._stop_heartbeats()
        if self.outcome == "stopped":
            with contextlib.suppress(ApiError, Unreachable):
                self.client.release(job.id, "the agent was stopped (signal)")
        return self.outcome or "stopped"
