"""What a job uploads: one run payload per version, with the host's facts read at the end; and
after a sweep that failed midway, the runs measured before it, each marked partial."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from typing import Any

from ..host.sysinfo import host_facts
from ..results.payload import run_payload
from ..results.runs import VersionRun
from .errors import StageError
from .state import JobState
from .steps import Step

logger = logging.getLogger(__name__)


def partial(state: JobState, step: Step, error: StageError) -> list[dict[str, Any]]:
    """The runs measured before the sweep failed at `step`, each marked partial."""
    stopped = {
        "stage": error.stage[:100],
        "reason": str(error)[:10000],
        "clients": step.clients,
    }
    measured = [run for run in state.runs.values() if run.results]
    for run in measured:
        run.stopped = stopped
    with contextlib.suppress(Exception):
        state.stop_all()  # before the host facts are read; the servers are done anyway
    try:
        return payloads(state, measured)
    except Exception:
        # The failure being reported matters more than what it leaves behind.
        logger.exception("job %s: could not build the partial runs", state.job.id)
        return []


def payloads(state: JobState, runs: list[VersionRun] | None = None) -> list[dict[str, Any]]:
    """The run payloads of `runs` (default: every version's)."""
    # The token decides the host; the claim says which it is.
    name = state.job.claimed_host or state.config.host
    host = {"name": name, **host_facts(work_dir=state.work)}
    finished = dt.datetime.now(dt.UTC)
    client = ".".join(str(n) for n in state.client_version)
    tablespaces = state.tablespaces
    return [
        run_payload(
            job=state.job,
            run=run,
            host=host,
            finished_at=finished,
            pgbench_version=client,
            client_limits=state.client_limits,
            tablespaces=tablespaces.evidence(index) if tablespaces else [],
        )
        for index, run in state.runs.items()
        if runs is None or any(run is chosen for chosen in runs)
    ]
