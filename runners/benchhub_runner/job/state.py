"""What one job knows while it runs, and the small acts every step of it shares: checking for
a stop, reporting progress, naming the stage a failure belongs to, switching servers."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..build import Build
from ..config import Config
from ..jobspec.spec import JobSpec
from ..measure import pgbench
from ..results.runs import VersionRun
from ..sandbox.account import job_account_name
from ..servers.cluster import JOB_ROLE, SUPERUSER, ClusterError
from ..servers.installation import ProvisionError
from ..servers.tablespaces import JobTablespaces
from .errors import Interrupted, StageError

logger = logging.getLogger(__name__)


class JobState:
    """One attempt of a job: its spec, the agent's configuration, its versions' runs and what
    it holds on the host (processes, builds, account, cgroup, tablespaces).

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
        self.client_version: tuple[int, int] = (0, 0)
        self.client: Path | None = None  # chosen at preparation (provisioning.choose_client)
        # The database role the job's SQL and pgbench run as: a superuser only on a host whose
        # owner trusts job code from this server (config trust_job_code).
        self.db_user = SUPERUSER if config.trust_job_code else JOB_ROLE
        self.builds: list[Build] = []
        # The OS account of this attempt alone (when the agent is root): its servers, psql and
        # pgbench, and anything they start, which ends with the job.
        self.account_name = job_account_name(job.id, job.attempt, work=config.work_dir)
        self.tablespaces: JobTablespaces | None = None
        # The job's own cgroup, when the host has one to give (sandbox/confine.py).
        self.cgroup: Path | None = None

    @property
    def client_bindir(self) -> Path:
        """The pgbench client's directory (psql beside it), chosen at preparation."""
        if self.client is None:
            raise StageError("provision", "no pgbench client chosen yet")
        return self.client

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise Interrupted("stopped")

    def update(self, **progress: Any) -> None:
        self.progress = {**self.progress, **progress}
        self.report(dict(self.progress))

    @contextlib.contextmanager
    def stage(self, stage: str) -> Iterator[None]:
        """A failure of a server, an installation or pgbench inside is the job's at `stage`."""
        try:
            yield
        except (ClusterError, ProvisionError, pgbench.PgbenchError) as exc:
            raise StageError(stage, str(exc)) from exc

    def target(self, run: VersionRun) -> pgbench.Target:
        return pgbench.Target(
            host=str(run.cluster.socket_dir), port=run.cluster.port, user=self.db_user
        )

    def switch_to(self, run: VersionRun | None) -> None:
        """Make `run`'s server the only one running (None: none)."""
        if self.running is run:
            return
        if self.running is not None:
            with self.stage("stop"):
                self.running.cluster.stop()
            self.running = None
        if run is not None:
            with self.stage("start"):
                run.cluster.start()
            self.running = run

    def stop_all(self) -> None:
        """Stop pgbench and every server; safe to call from a signal handler, and twice."""
        for process in list(self.processes):
            process.stop()
        for run in self.runs.values():
            with contextlib.suppress(Exception):
                run.cluster.stop()
        self.running = None

    def agent_dir(self) -> Path:
        """A directory of the agent's own for this attempt (root's, 0700), beside the job's."""
        path = self.config.work_dir / "agent-jobs" / self.work.name
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path
