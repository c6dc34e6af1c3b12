"""A job's cgroup: everything started in it ends with it, whoever it runs as; and what an agent
killed mid-job left (accounts, their processes, cgroups) is removed when the next one starts.

These need what a benchmark host's agent has: root and a writable cgroup v2 hierarchy."""

from __future__ import annotations

import pwd
import shutil
import subprocess
import time
from pathlib import Path

from conftest import open_tmpdir

from benchhub_runner.job.cleanup import stale_clusters_stop
from benchhub_runner.sandbox.account import (
    account_find,
    account_processes,
    account_remove,
    job_account_name,
    runner_account,
)
from benchhub_runner.sandbox.confine import cgroup_end, cgroup_pids, job_cgroup_create, launcher
from benchhub_runner.sandbox.processes import pid_alive

# Detached from the caller in new sessions, grandchildren included, and a loop that forks on.
FORKER = "sleep 1000 & (setsid sleep 1001 &) ; while :; do sleep 1002 & sleep 0.01; done"


def cgroup_for(name: str) -> Path:
    cgroup, why = job_cgroup_create(name)
    assert cgroup is not None, f"a benchmark host's agent runs as root with cgroup v2: {why}"
    return cgroup


def real_uids(pids: list[int]) -> set[int]:
    """The real uids of those still alive: the forker's short sleeps end between listing and
    reading, so a pid that has gone is skipped rather than read."""
    uids = set()
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        uids.add(int(next(ln for ln in status.splitlines() if ln.startswith("Uid:")).split()[1]))
    return uids


def wait_for(check, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_it_kills_everything_in_a_job_cgroup_whatever_user_it_runs_as():
    """The cgroup alone: these run as root, which the account's kill would never find."""
    cgroup = cgroup_for("bhjob-987655-1")
    argv = launcher(cgroup, uid=0, gid=0, argv=["setsid", "sh", "-c", FORKER])
    starter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: len(cgroup_pids(cgroup)) >= 4)
        pids = cgroup_pids(cgroup)
        assert real_uids(pids) == {0}

        assert cgroup_end(cgroup) == []

        assert not cgroup.exists()
        starter.wait(timeout=5)
        assert not any(pid_alive(pid) for pid in pids)
    finally:
        if cgroup.exists():
            cgroup_end(cgroup)


def test_it_starts_a_job_program_inside_the_cgroup_as_the_job_account():
    name = job_account_name(987656, 1)
    cgroup = cgroup_for(name)
    account = runner_account(name=name)
    assert account is not None and account.cgroup == cgroup
    try:
        argv, kwargs = account.spawn(["sh", "-c", "id -u; id -G; cat /proc/self/cgroup"])
        done = subprocess.run(argv, capture_output=True, text=True, check=True, **kwargs)
        uid, groups, *cgroups = done.stdout.split("\n")
        assert (int(uid), groups) == (account.uid, str(account.gid))
        assert f"0::/{cgroup.name}" in cgroups or any(
            line.startswith("0::") and line.endswith(f"/{cgroup.name}") for line in cgroups
        ), cgroups
    finally:
        cgroup_end(cgroup)
        account_remove(account)


def test_it_removes_at_start_what_an_agent_killed_mid_job_left_and_nothing_of_another_agent():
    jobs = open_tmpdir("benchhub-confine-jobs-")
    elsewhere = open_tmpdir("benchhub-confine-other-")
    name = job_account_name(987657, 2)
    cgroup = cgroup_for(name)
    left = runner_account(name=name, home=jobs / "987657-2")
    other = runner_account(name=job_account_name(987658, 1), home=elsewhere / "987658-1")
    assert left is not None and other is not None and left.cgroup == cgroup
    try:
        argv, kwargs = left.spawn(["setsid", "sh", "-c", FORKER])
        subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True, **kwargs)
        wait_for(lambda: len(account_processes(left.uid)) >= 3)

        stale_clusters_stop(jobs)

        assert account_processes(left.uid) == []
        assert not cgroup.exists()
        assert account_find(left.name) is None
        assert account_find(other.name) is not None  # another agent's: its home is elsewhere
    finally:
        if cgroup.exists():
            cgroup_end(cgroup)
        for account in (left, other):
            if account is not None:
                account_remove(account)
        shutil.rmtree(jobs, ignore_errors=True)
        shutil.rmtree(elsewhere, ignore_errors=True)
    assert name not in {entry.pw_name for entry in pwd.getpwall()}
