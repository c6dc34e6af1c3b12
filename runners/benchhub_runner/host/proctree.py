"""Processes as /proc shows them: one process's CPU time and start, and a process tree (the
watched pgbench clients and whatever they started)."""

from __future__ import annotations

from pathlib import Path

from .reading import read_text


def read_process(pid: int, *, proc: Path) -> tuple[tuple[int, int], int] | None:
    """((pid, start time), utime + stime) from /proc/<pid>/stat, or None once it has gone."""
    text = read_text(proc / str(pid) / "stat")
    if not text:
        return None
    # The command name is in parentheses and may itself contain spaces and parentheses.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None  # a read racing the process's exit can come back short
    return (pid, start), utime + stime


def parent_of(pid: int, *, proc: Path) -> int | None:
    fields = (read_text(proc / str(pid) / "stat") or ")").rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def children_of(pid: int, *, proc: Path) -> list[int] | None:
    """Children from /proc/<pid>/task/*/children, or None when the kernel lacks that file
    (CONFIG_PROC_CHILDREN is off on some distribution kernels)."""
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        text = read_text(task / "children")
        if text is None and task.exists():
            return None
        found.extend(int(c) for c in (text or "").split())  # None: the thread has just exited
    return found


def all_pids(*, proc: Path) -> list[int]:
    try:
        return [int(p.name) for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return []


def descendants(pids: set[int], *, proc: Path, scan: bool) -> set[int]:
    """The given processes plus their descendants.

    Children come from the kernel's children files when it has them; otherwise from a scan of
    every process's parent, which costs one read per process on the machine (thousands with
    a large max_connections), so the caller allows it only every few seconds.
    """
    found: set[int] = set()
    queue, parents = list(pids), None
    while queue:
        pid = queue.pop()
        if pid in found:
            continue
        found.add(pid)
        kids = children_of(pid, proc=proc)
        if kids is None and scan:
            if parents is None:
                parents = {p: parent_of(p, proc=proc) for p in all_pids(proc=proc)}
            kids = [p for p, parent in parents.items() if parent == pid]
        queue.extend(kids or [])
    return found
