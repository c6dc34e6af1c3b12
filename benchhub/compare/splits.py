"""Where a series of runs stops being like with like, for the History line and the regression
detector (one comparability key at one client level, in time order).

The key holds the hardware, the configuration (server settings), the workload definition (query
mode included), the scale and the duration. What else can move tps is held by the one test a
compare set uses (describe.held_differences: the pgbench client's major, the kernel, the
warm-up, the tablespaces and their devices, THP / huge pages / CPU governor), with the build's
compiler, configure flags and CFLAGS (the version moves along a History line, how it was
compiled must not), and pgbench's threads at the level (describe.threads_difference). A series
splits before each run that differs from the one before it in any of these, or in its
comparability key (a History of one configuration may span keys); the History chart marks each
split, and detection runs per segment, so no change point is called across one.

What a point holds is read by compare.selectors (with_threads, held_runs); this module compares
it and reads nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from benchhub.builds.models import Build
from benchhub.compare.describe import (
    Difference,
    held_differences,
    held_values,
    threads_difference,
)
from benchhub.hosts.models import HostFacts


@dataclass(frozen=True)
class HeldRun:
    """What a point holds equal besides its key: enough of a Run for describe.held_values."""

    pgbench_version: str
    warmup_s: float | None
    host_facts: HostFacts
    build: Build
    tablespaces: list[dict[str, Any]]
    threads: int | None
    key: str


@dataclass(frozen=True)
class Split:
    """The series changes before its point `index` (the first run after the change), started at
    `started_at`, in what `reasons` name (`kernel 6.8 (not 6.1)`)."""

    index: int
    started_at: datetime
    reasons: list[str]


def series_splits(rows: list[Any], held: list[HeldRun], *, clients: int) -> list[Split]:
    """The splits of a series whose points are `rows` (oldest first, with the columns of
    selectors.HELD_COLUMNS) and `held` their selectors.held_runs."""
    splits = []
    for index in range(1, len(held)):
        before, now = held[index - 1], held[index]
        reasons = held_differences(before, now, builds=True)
        threads = threads_difference(clients, before.threads, now.threads)
        if threads:
            reasons.append(threads)
        if now.key != before.key:
            reasons.append(f"comparability key {now.key[:8]} (not {before.key[:8]})")
        if reasons:
            splits.append(
                Split(index=index, started_at=rows[index].run__started_at, reasons=reasons)
            )
    return splits


def segments(count: int, splits: list[Split]) -> list[tuple[int, int]]:
    """The (start, end) slices of a series of `count` points between its splits."""
    bounds = [0, *(split.index for split in splits), count]
    return [(start, end) for start, end in itertools.pairwise(bounds) if end > start]


def segment_differences(
    held: list[HeldRun], splits: list[Split], labels: list[str]
) -> list[Difference]:
    """What differs between the segments of a series, as the Compare page's differences banner
    has it: one Difference per held item whose value is not the same in every segment, valued
    per segment (`labels[i]` names the segment starting at point i)."""
    starts = [start for start, _ in segments(len(held), splits)]
    if len(starts) < 2:
        return []
    values = [
        [
            *held_values(held[start], builds=True),
            ("threads", str(held[start].threads or "unknown")),
            ("comparability key", held[start].key[:8]),
        ]
        for start in starts
    ]
    found = []
    for item, (name, _) in enumerate(values[0]):
        per_segment = [
            (labels[start], row[item][1]) for start, row in zip(starts, values, strict=True)
        ]
        if len({value for _, value in per_segment}) > 1:
            found.append(Difference(name=name, values=per_segment))
    return found
