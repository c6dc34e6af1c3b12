"""Processes: whether one still runs (read from /proc: a pid that answers may be a zombie or
reused), and the environment of the programs that run job content."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def pid_alive(pid: int, comm_prefix: str | None = None) -> bool:
    """Whether `pid` runs; with `comm_prefix`, also whether it is that program (pidfiles go
    stale and pids are reused).

    A zombie counts as gone: it has exited and only waits for a parent (maybe none, in a
    container whose PID 1 does not reap) to collect it. Without /proc (macOS) the pid is trusted.
    """
    if pid <= 0:
        return False  # kill(0) and kill(-n) would signal whole process groups
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by someone else
    if not Path("/proc/self/stat").exists():
        return True
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return False  # exited between the two looks
    # "pid (comm) state ...": the command name may hold spaces and parentheses, later fields not.
    comm, _, rest = stat_line.partition("(")[2].rpartition(")")
    fields = rest.split()
    if not fields or fields[0] == "Z":
        return False
    return comm_prefix is None or comm.startswith(comm_prefix)


# Variables a job's programs may inherit from the agent: where programs and their libraries are,
# nothing else. A token, a proxy password or a cloud credential in the agent's environment must
# not reach job code (psql's \! when trusted, archive_command, a DO block's COPY ... PROGRAM).
INHERITED = ("PATH", "LD_LIBRARY_PATH")


def job_env(*, home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a program that runs job content (psql, pgbench, postgres),
    built from scratch: PATH (and LD_LIBRARY_PATH) from the agent, HOME, the C locale, UTC,
    then `extra` (PGAPPNAME, the installation's library path). No BENCHHUB_*, no PG*."""
    env = {name: os.environ[name] for name in INHERITED if os.environ.get(name)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "LANG": "C", "LC_ALL": "C", "TZ": "UTC"})
    env.update(extra or {})
    return env
