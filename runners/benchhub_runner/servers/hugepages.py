"""Huge pages a job's servers need, checked against what the host reserves, before anything runs.

With ``huge_pages = on`` a server that finds too few free huge pages does not start, and the job
would fail late (after builds, initdb and data loading) with PostgreSQL's ``could not map
anonymous shared memory``. Reserving them is the host owner's act (``sysctl -w vm.nr_hugepages``,
root), so the agent only checks and says how many to reserve.

The need is an estimate made before any server exists, from the job's settings: shared_buffers,
wal_buffers (its default: 1/32 of shared_buffers, at most 16 MB), per connection the lock table
and process slots (about 24 kB at the default max_locks_per_transaction of 64, scaled by it), and
64 MB for everything else (the rest of the fixed structures, pg_stat_statements). It errs high by
a few per cent at 16 GB of shared_buffers, which a reservation should anyway. Stdlib only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

KB = 1024
MB = 1024 * KB
_UNITS = {"kb": KB, "mb": MB, "gb": 1024 * MB, "tb": 1024 * 1024 * MB}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]b)?\s*$", re.IGNORECASE)
_ON = {"on", "true", "yes", "1"}
BLOCK = 8 * KB
DEFAULT_SHARED_BUFFERS = 128 * MB
PER_CONNECTION = 24 * KB
FIXED = 64 * MB
DEFAULT_LOCKS = 64


class HugePagesShort(Exception):
    """The host does not reserve the huge pages the servers need; the message says how many."""


@dataclass(frozen=True)
class HostHugePages:
    """The host's huge pages, from /proc/meminfo: page size (kB), total reserved, free."""

    page_kb: int | None
    total: int
    free: int


def wants_huge_pages(overrides: Mapping[str, str]) -> bool:
    """Whether the settings make huge pages a condition of starting (``huge_pages = on``)."""
    value = str(overrides.get("huge_pages", "")).strip().strip("'\"").lower()
    return value in _ON


def size_bytes(value: str, *, unit: int) -> int:
    """A memory setting in bytes: with a unit (kB, MB, GB, TB), else in the setting's `unit`."""
    match = _SIZE.match(value.strip().strip("'\""))
    if match is None:
        raise ValueError(f"{value!r} is not a size (a number, maybe with kB, MB, GB or TB)")
    number, suffix = float(match[1]), match[2]
    return int(number * (_UNITS[suffix.lower()] if suffix else unit))


def shared_memory_estimate(overrides: Mapping[str, str], *, max_connections: int) -> int:
    """Bytes of shared memory a server with these settings maps (see the module docstring)."""
    shared = (
        size_bytes(overrides["shared_buffers"], unit=BLOCK)
        if "shared_buffers" in overrides
        else DEFAULT_SHARED_BUFFERS
    )
    wal = overrides.get("wal_buffers", "-1").strip().strip("'\"")
    wal_bytes = (
        min(max(shared // 32, 64 * KB), 16 * MB) if wal == "-1" else size_bytes(wal, unit=BLOCK)
    )
    locks = int(overrides.get("max_locks_per_transaction", DEFAULT_LOCKS))
    per_connection = PER_CONNECTION * max(locks, DEFAULT_LOCKS) // DEFAULT_LOCKS
    return shared + wal_bytes + max_connections * per_connection + FIXED


def host_huge_pages(meminfo: str) -> HostHugePages:
    """The huge pages /proc/meminfo reports (no Hugepagesize: the kernel offers none)."""
    values = {}
    for line in meminfo.splitlines():
        key, _, rest = line.partition(":")
        values[key.strip()] = rest.strip().removesuffix("kB").strip()
    size = values.get("Hugepagesize", "")
    return HostHugePages(
        page_kb=int(size) if size.isdigit() else None,
        total=int(values.get("HugePages_Total", "0") or 0),
        free=int(values.get("HugePages_Free", "0") or 0),
    )


def huge_pages_check(
    overrides: Mapping[str, str], *, max_connections: int, host: HostHugePages
) -> int | None:
    """The huge pages a server needs when the settings ask for ``huge_pages = on`` (None when
    they do not). HugePagesShort, with the number to reserve, when the host has fewer free."""
    if not wants_huge_pages(overrides):
        return None
    if host.page_kb is None:
        raise HugePagesShort(
            "huge_pages = on, but this host's kernel offers no huge pages (no Hugepagesize in "
            "/proc/meminfo): run without it or on a host that has them"
        )
    estimate = shared_memory_estimate(overrides, max_connections=max_connections)
    needed = math.ceil(estimate / (host.page_kb * KB))
    if host.free >= needed:
        return needed
    in_use = host.total - host.free
    raise HugePagesShort(
        f"huge_pages = on: the server needs about {needed} huge pages of {host.page_kb} kB "
        f"({estimate / MB:.0f} MB: shared_buffers {overrides.get('shared_buffers', '128MB')} "
        f"and {max_connections} connections), and the host has {host.free} free "
        f"(vm.nr_hugepages = {host.total}). Reserve them as root before queuing the job: "
        f"sysctl -w vm.nr_hugepages={needed + in_use} (vm.nr_hugepages in /etc/sysctl.conf "
        "to keep it)"
    )
