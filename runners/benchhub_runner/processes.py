"""Whether a process still runs, read from /proc: a pid that answers may be a zombie or reused."""

from __future__ import annotations

import os
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
