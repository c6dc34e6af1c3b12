"""The unprivileged OS accounts that PostgreSQL's programs run as when the caller is root.

initdb and postgres refuse to run as root. The agent builds as `benchhub-runner` and runs each
job's programs (its servers, psql, pgbench) as a throwaway account of that job alone
(`job_account_name`: `bhjob-<job>-<attempt>`), which `account_end` empties of processes when the
job ends and `account_remove` deletes; the development stack (scripts/stack.py) runs as
`benchhub`. An account is created on first use, and when the caller is not root everything runs
as the caller. A job account's home is its job's directory, which tells an agent's own leftovers
(`job_accounts_end_left`) from another agent's.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pwd
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bubblewrap import Sandbox
from .confine import cgroup_end, job_cgroup_find, job_cgroups_left, launcher

logger = logging.getLogger(__name__)

RUNNER_USER = "benchhub-runner"
JOB_USER_PREFIX = "bhjob-"
# useradd takes names of at most 32 characters.
_MAX_NAME = 32


class AccountError(Exception):
    """The account could not be created; the message carries useradd's reason."""


@dataclass(frozen=True)
class Account:
    """An OS user that server programs run as."""

    name: str
    uid: int
    gid: int
    # The job's cgroup (confine.py), when the job made one: its programs start inside it.
    cgroup: Path | None = None
    # The job's sandbox layout (bubblewrap.py), when its programs run in one.
    sandbox: Sandbox | None = None

    def popen_kwargs(self) -> dict[str, Any]:
        """subprocess arguments that run a program as this user, with no supplementary groups."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def spawn(
        self, argv: list[str], *, cwd: Path | None = None, main: bool = False
    ) -> tuple[list[str], dict[str, Any]]:
        """(argv, subprocess arguments) that run `argv` as this user, inside its cgroup when
        it has one and inside its sandbox (started in `cwd`; `main`: see Sandbox.wrap) when it
        has one. Once the job's
        cgroup is removed (the job ended), a program started after it (a server restarted to
        read the job's tables) runs as the account alone, which the account's own kill still
        ends."""
        if self.sandbox is not None:
            argv = self.sandbox.wrap(argv, cwd=cwd, main=main)
        if self.cgroup is None or not self.cgroup.is_dir():
            return argv, self.popen_kwargs()
        return launcher(self.cgroup, uid=self.uid, gid=self.gid, argv=argv), {}


def runner_account(*, name: str = RUNNER_USER, home: Path | None = None) -> Account | None:
    """None when not root (run as self); else the unprivileged account, created if missing
    (with `home` as its home directory, not created), in its job's cgroup if there is one."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        where = ["--home-dir", str(home)] if home is not None else []
        shell = ["--shell", "/usr/sbin/nologin"]
        done = subprocess.run(
            ["useradd", "--system", "--no-create-home", *where, *shell, name],
            capture_output=True,
            text=True,
            check=False,
        )
        # Exit 9 is "already exists": another process created it between our lookup and useradd.
        if done.returncode not in (0, 9):
            raise AccountError(f"useradd {name} failed: {done.stderr.strip()}") from None
        entry = pwd.getpwnam(name)
    cgroup = job_cgroup_find(name) if name.startswith(JOB_USER_PREFIX) else None
    return Account(name=name, uid=entry.pw_uid, gid=entry.pw_gid, cgroup=cgroup)


def account_find(name: str) -> Account | None:
    """The account `name` if it exists (created by nothing here)."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return Account(name=name, uid=entry.pw_uid, gid=entry.pw_gid)


def job_account_name(job_id: int, attempt: int, *, work: Path | None = None) -> str:
    """The throwaway account of one attempt at one job; with the agent's work directory, named
    after it too (`bhjob-<6 hex>-<job>-<attempt>`): two agents on one host, serving two
    servers whose job ids overlap, must never share an account, and ending one job's would kill
    the other's processes."""
    if work is None:
        return f"{JOB_USER_PREFIX}{job_id}-{attempt}"[:_MAX_NAME]
    place = hashlib.sha256(str(work.resolve()).encode()).hexdigest()[:6]
    return f"{JOB_USER_PREFIX}{place}-{job_id}-{attempt}"[:_MAX_NAME]


def account_processes(uid: int) -> list[int]:
    """Every live process whose real, effective or saved user is `uid` (zombies count as gone:
    they have exited)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uids = {int(u) for u in fields.get("Uid", "").split()[:3]}
        if uid in uids and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(entry.name))
    return found


def account_end(account: Account, *, timeout_s: float = 10.0) -> list[int]:
    """Stop and kill every process of `account`, whatever process group or session it moved
    to, until none is left; returns the pids still there after `timeout_s` (none, normally).

    Each round freezes them all first (SIGSTOP), so a process forking as fast as it can has no
    child left running when the SIGKILLs arrive."""
    deadline = time.monotonic() + timeout_s
    while pids := account_processes(account.uid):
        if time.monotonic() > deadline:
            return pids
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        time.sleep(0.05)
    return []


def account_remove(account: Account) -> None:
    """Delete a throwaway account (its processes must be gone: account_end)."""
    done = subprocess.run(["userdel", account.name], capture_output=True, text=True, check=False)
    # Exit 6: no such user (removed already).
    if done.returncode not in (0, 6):
        raise AccountError(f"userdel {account.name} failed: {done.stderr.strip()}")


def job_accounts_end_left(jobs_dir: Path) -> list[str]:
    """Kill the processes and remove the cgroups and accounts of jobs an earlier run of this
    agent left (it was killed mid-job): job accounts whose home is under `jobs_dir`, and job
    cgroups under the agent's cgroup whose account is gone or is one of those. Returns the names
    removed. Call it with the host lock held and as root, so no live job of this agent is
    touched; another agent's accounts (homes elsewhere) are left alone."""
    mine = {
        entry.pw_name
        for entry in pwd.getpwall()
        if entry.pw_name.startswith(JOB_USER_PREFIX)
        and Path(entry.pw_dir).resolve().is_relative_to(jobs_dir.resolve())
    }
    removed = []
    for cgroup in job_cgroups_left(JOB_USER_PREFIX):
        if cgroup.name in mine or account_find(cgroup.name) is None:
            cgroup_end(cgroup)
            removed.append(cgroup.name)
    for name in sorted(mine):
        account = account_find(name)
        if account is None:
            continue
        if left := account_end(account):
            logger.error("processes %s of %s survived SIGKILL; the account stays", left, name)
            continue
        try:
            account_remove(account)
        except AccountError as exc:
            logger.error("%s", exc)
            continue
        removed.append(name)
    return sorted(set(removed))
