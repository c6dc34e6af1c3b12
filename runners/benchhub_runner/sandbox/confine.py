"""A job's own cgroup: every process its programs start stays in it, and all of them end with it.

When the agent is root and the cgroup v2 hierarchy is writable, each job attempt gets a cgroup
beside nothing else, `<the agent's own cgroup>/bhjob-<job>-<attempt>`. Its programs (servers,
psql, pgbench) start through a launcher that joins the cgroup as root and only then becomes the
job's account and runs the program, so the program and everything it forks, in any session or
process group, is in the cgroup from its first instruction; an unprivileged process cannot move
itself out (that needs write access to a cgroup.procs owned by root). At the end `cgroup.kill`
kills them all at once (a forking process cannot outrun it), the agent waits until
`cgroup.procs` is empty and removes the cgroup.

Where there is no such hierarchy (not root, cgroup v1 only, a read-only /sys/fs/cgroup in a
container) `job_cgroup_create` says why and the job falls back to killing its account's
processes (account.account_end).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

# Runs as root inside the new process: join the cgroup, drop to the account (all three user
# and group ids, no supplementary groups), then become the program. The pid is kept, so the
# caller's Popen waits for and signals the program itself. The program is found on PATH before
# the drop and nothing is imported after it: the account may not read the agent's Python.
_LAUNCHER = """\
import os, sys
procs, uid, gid, argv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
try:
    program = argv[0]
    if "/" not in program:
        places = [d + "/" + program for d in os.environ.get("PATH", "").split(":") if d]
        program = next((p for p in places if os.access(p, os.X_OK)), program)
    with open(procs, "w") as handle:
        handle.write(str(os.getpid()))
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    os.execv(program, argv)
except OSError as exc:
    sys.stderr.write(f"cannot start {argv[0]}: {exc}\\n")
    sys.exit(127)
"""


def launcher(cgroup: Path, *, uid: int, gid: int, argv: list[str]) -> list[str]:
    """The argv that runs `argv` as `uid`/`gid` inside `cgroup` (the caller must be root and
    must not ask subprocess to change user itself: the launcher needs root to join)."""
    head = [sys.executable, "-I", "-S", "-c", _LAUNCHER]
    return [*head, str(cgroup / "cgroup.procs"), str(uid), str(gid), *argv]


def agent_cgroup() -> Path | None:
    """The agent's own cgroup v2 directory, or None when there is no cgroup v2 hierarchy."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    # mountinfo: "... mount-point options - fstype source ..."; hybrid hosts mount v2 at
    # /sys/fs/cgroup/unified, pure v2 hosts at /sys/fs/cgroup.
    points = [m.split()[4] for m in mounts if " - cgroup2 " in m]
    if own is None or not points:
        return None
    return Path(points[0]) / own.lstrip("/")


def job_cgroup_path(name: str) -> Path | None:
    """Where the cgroup of job account `name` is (or would be)."""
    base = agent_cgroup()
    return base / name if base is not None else None


def job_cgroup_create(name: str) -> tuple[Path | None, str]:
    """(the new cgroup of job account `name`, "") or (None, why there is none)."""
    if os.geteuid() != 0:
        return None, "the agent is not root"
    path = job_cgroup_path(name)
    if path is None:
        return None, "no cgroup v2 hierarchy is mounted"
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        return None, f"cannot create {path}: {exc.strerror}"
    if not (path / "cgroup.procs").exists():
        return None, f"{path} is not a cgroup v2 directory"
    return path, ""


def job_cgroup_find(name: str) -> Path | None:
    """The cgroup of job account `name`, if the job made one."""
    path = job_cgroup_path(name)
    return path if path is not None and (path / "cgroup.procs").exists() else None


def cgroup_pids(cgroup: Path) -> list[int]:
    try:
        return [int(pid) for pid in (cgroup / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def cgroup_end(cgroup: Path, *, timeout_s: float = 10.0) -> list[int]:
    """Kill every process in `cgroup` and remove it; returns the pids still in it after
    `timeout_s` (none, normally), in which case the cgroup stays.

    `cgroup.kill` (Linux 5.14) kills the whole cgroup in one step; before it, the cgroup is
    frozen so nothing forks while each pid gets SIGKILL (a frozen process still dies of it)."""
    deadline = time.monotonic() + timeout_s
    kill = cgroup / "cgroup.kill"
    while pids := cgroup_pids(cgroup):
        if time.monotonic() > deadline:
            return pids
        with contextlib.suppress(OSError):
            if kill.exists():
                kill.write_text("1")
            else:
                (cgroup / "cgroup.freeze").write_text("1")
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    # Removal can lag the last exit by a moment (the cgroup is still "populated" until then).
    while True:
        try:
            cgroup.rmdir()
            return []
        except FileNotFoundError:
            return []
        except OSError:
            if time.monotonic() > deadline:
                return cgroup_pids(cgroup)
            time.sleep(0.05)


def job_cgroups_left(prefix: str) -> list[Path]:
    """Cgroups of job accounts (names starting with `prefix`) under the agent's own cgroup."""
    base = agent_cgroup()
    if base is None or os.geteuid() != 0:
        return []
    with contextlib.suppress(OSError):
        return sorted(p for p in base.iterdir() if p.name.startswith(prefix) and p.is_dir())
    return []
