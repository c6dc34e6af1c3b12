"""What a job holds on the host and how it goes: its account and cgroup, made before any of
its programs exists and ended with it; its tablespace directories and work directories; and
what an earlier agent (SIGKILLed) left behind."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import time
from pathlib import Path

from ..sandbox.account import (
    AccountError,
    account_end,
    account_find,
    account_remove,
    job_accounts_end_left,
    runner_account,
)
from ..sandbox.confine import cgroup_end, job_cgroup_create
from ..servers.tablespaces import RECORD as TABLESPACES_RECORD
from ..servers.tablespaces import leftovers_remove
from .errors import StageError
from .state import JobState

logger = logging.getLogger(__name__)


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
    # As root every process of a job was its account's, ended above; a job's pid file is never
    # trusted then (it may name any process on the host).
    pidfiles = jobs_dir.glob("*/v*/data/postmaster.pid") if os.geteuid() != 0 else []
    for pidfile in pidfiles:
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


def confine(state: JobState) -> None:
    """As root: the job's account (its home the job's directory) and, where the host has
    cgroup v2, the job's cgroup, before any program of the job exists; logs which layer
    will end the job's processes."""
    job_id = state.job.id
    if os.geteuid() != 0:
        logger.info("job %s: the agent is not root: job programs run as its user", job_id)
        return
    # The account first: a cgroup without one would pass for a leftover at another
    # agent's start (job_accounts_end_left).
    try:
        runner_account(name=state.account_name, home=state.work)
    except AccountError as exc:
        raise StageError("initdb", str(exc)) from exc
    state.cgroup, why = job_cgroup_create(state.account_name)
    if state.cgroup is not None:
        logger.info(
            "job %s: processes confined to cgroup %s, as account %s",
            job_id,
            state.cgroup,
            state.account_name,
        )
    else:
        logger.warning(
            "job %s: no cgroup (%s): processes are ended by their account %s alone",
            job_id,
            why,
            state.account_name,
        )


def end_processes(state: JobState) -> None:
    """Kill whatever the job still runs (a background process its code started, in any
    session): its whole cgroup, then anything of its account; and check it is gone."""
    job_id = state.job.id
    if state.cgroup is not None:
        if left := cgroup_end(state.cgroup):
            logger.error("job %s: processes %s survived cgroup.kill", job_id, left)
        else:
            logger.info("job %s: cgroup %s killed, empty and removed", job_id, state.cgroup)
            state.cgroup = None
    account = account_find(state.account_name) if os.geteuid() == 0 else None
    if account is None:
        return
    if left := account_end(account):
        logger.error("job %s: processes %s of %s survived SIGKILL", job_id, left, account.name)


def remove_tablespaces(state: JobState) -> None:
    """The job's tablespace directories go with it (the servers are stopped by now)."""
    if state.tablespaces is None:
        return
    for failure in state.tablespaces.remove():
        logger.error("job %s: cannot remove a tablespace directory: %s", state.job.id, failure)


def remove(state: JobState) -> None:
    """The job's directories, then its processes and its account."""
    shutil.rmtree(state.work, ignore_errors=True)
    shutil.rmtree(state.config.work_dir / "agent-jobs" / state.work.name, ignore_errors=True)
    account = account_find(state.account_name) if os.geteuid() == 0 else None
    if account is not None:
        end_processes(state)
        try:
            account_remove(account)
        except AccountError as exc:
            logger.error("job %s: %s", state.job.id, exc)
