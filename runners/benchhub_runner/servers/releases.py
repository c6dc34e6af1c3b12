"""When PostgreSQL released what: where a snapshot of a branch on a given day stands among the
releases of its major.

A snapshot named after a major and a day (``13-snapshot-2021-05-01``) is that branch's code on
that day. Before the major's first pre-release the branch was the development head (it orders as
``13devel`` of that day); from the first pre-release to the .0 it holds that pre-release; from the
.0 on it is the stable branch, holding every minor release made by that day. The dates come from
the release announcements (https://www.postgresql.org/about/newsarchive/); minor releases are
counted on the published quarterly calendar (the second Thursday of February, May, August and
November), which out-of-cycle releases do not follow: a snapshot taken just after one sorts one
minor early. Stdlib only, like the rest of the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

PreStage = Literal["alpha", "beta"]


@dataclass(frozen=True)
class MajorRelease:
    """A major's first pre-release (its stage and day) and the day of its .0."""

    first_stage: PreStage
    first_day: date
    release_day: date


MAJORS: dict[tuple[int, int], MajorRelease] = {
    (9, 2): MajorRelease("beta", date(2012, 5, 14), date(2012, 9, 10)),
    (9, 3): MajorRelease("beta", date(2013, 5, 13), date(2013, 9, 9)),
    (9, 4): MajorRelease("beta", date(2014, 5, 15), date(2014, 12, 18)),
    (9, 5): MajorRelease("alpha", date(2015, 7, 2), date(2016, 1, 7)),
    (9, 6): MajorRelease("beta", date(2016, 5, 12), date(2016, 9, 29)),
    (10, 0): MajorRelease("beta", date(2017, 5, 18), date(2017, 10, 5)),
    (11, 0): MajorRelease("beta", date(2018, 5, 24), date(2018, 10, 18)),
    (12, 0): MajorRelease("beta", date(2019, 5, 23), date(2019, 10, 3)),
    (13, 0): MajorRelease("beta", date(2020, 5, 21), date(2020, 9, 24)),
    (14, 0): MajorRelease("beta", date(2021, 5, 20), date(2021, 9, 30)),
    (15, 0): MajorRelease("beta", date(2022, 5, 19), date(2022, 10, 13)),
    (16, 0): MajorRelease("beta", date(2023, 5, 25), date(2023, 9, 14)),
    (17, 0): MajorRelease("beta", date(2024, 5, 23), date(2024, 9, 26)),
    (18, 0): MajorRelease("beta", date(2025, 5, 8), date(2025, 9, 25)),
}
OLDEST = min(MAJORS)
_QUARTER_MONTHS = (2, 5, 8, 11)
_THURSDAY = 3


@dataclass(frozen=True)
class Position:
    """Where a branch snapshot stands: the stage and number of the last release it holds
    ("devel" and 0 before any), and for a stable branch the minor (None otherwise)."""

    stage: Literal["devel", "alpha", "beta", "release"]
    number: int
    minor: int | None


def snapshot_position(*, major: tuple[int, int], day: date) -> Position:
    """The last release of `major` that its branch held on `day`. A major newer than the table
    is still in development; one older than the table was released long before any snapshot
    anyone names, and holds its last minor (counted on the calendar from no known .0: None
    minors become the largest, see :data:`LAST_MINOR`)."""
    known = MAJORS.get(major)
    if known is None:
        if major > max(MAJORS):
            return Position("devel", 0, None)
        return Position("release", 0, LAST_MINOR)
    if day < known.first_day:
        return Position("devel", 0, None)
    if day < known.release_day:
        return Position(known.first_stage, 1, None)
    return Position("release", 0, minors_released(since=known.release_day, until=day))


LAST_MINOR = 9999


def minors_released(*, since: date, until: date) -> int:
    """How many quarterly minor release days fall after `since` and on or before `until`."""
    count = 0
    for year in range(since.year, until.year + 1):
        for month in _QUARTER_MONTHS:
            day = _second_thursday(year, month)
            if since < day <= until:
                count += 1
    return count


def _second_thursday(year: int, month: int) -> date:
    first = date(year, month, 1)
    return first + timedelta(days=(_THURSDAY - first.weekday()) % 7 + 7)
