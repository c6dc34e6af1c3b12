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

import logging
import threading
from typing import Any

from . import cleanup, passes, setup, sweep, upload
from .errors import StageError
from .state import JobState
from .steps import plan

logger = logging.getLogger(__name__)


class JobRunner(JobState):
    """Runs one job; `execute()` returns the upload payloads, one per version. Each stage is a
    module of this package (setup, sweep, passes, upload, cleanup); this class orders them and
    makes sure whatever the job started ends with it."""

    def execute(self) -> list[dict[str, Any]]:
        steps = plan(self.job)
        watchdog = threading.Timer(self.config.job_timeout_s, self._watchdog)
        watchdog.daemon = True
        watchdog.start()
        try:
            setup.prepare(self)
            for index, step in enumerate(steps, start=1):
                self.check_stop()
                try:
                    sweep.measure(self, step, index=index, total=len(steps))
                except StageError as exc:
                    exc.payloads = upload.partial(self, step, exc)
                    raise
            for run in self.runs.values():
                self.check_stop()
                passes.evidence_passes(self, run)
                self.check_stop()
                passes.profile(self, run)
            self.switch_to(None)
            return upload.payloads(self)
        finally:
            watchdog.cancel()
            self.stop_all()
            cleanup.end_processes(self)
            cleanup.remove_tablespaces(self)
            # Released only now: eviction must not remove an install whose server ran.
            for build in self.builds:
                build.close()

    def _watchdog(self) -> None:
        logger.error(
            "job %s ran past job_timeout_s=%s: stopping it",
            self.job.id,
            self.config.job_timeout_s,
        )
        self.watchdog_fired = True
        self.stop.set()
        self.stop_all()

    def cleanup(self) -> None:
        """The job's directories, processes and account, once its payloads are sent."""
        cleanup.remove(self)
