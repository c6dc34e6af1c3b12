"""Version names: the grammar, the order users expect, and which servers satisfy a request."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchhub_runner.servers.releases import MAJORS
from benchhub_runner.servers.versions import (
    VersionError,
    version_major,
    version_matches,
    version_parse,
)

STAGE_RANK = {"devel": 0, "alpha": 1, "beta": 2, "rc": 3, "release": 4}


@dataclass(frozen=True)
class Named:
    """A version as a test describes it, with the order it must have, independent of the key."""

    major: tuple[int, int]
    stage: str
    number: int  # pre-release number
    minor: int
    day: dt.date | None
    label: str

    @property
    def name(self) -> str:
        major = f"{self.major[0]}.{self.major[1]}" if self.major[0] < 10 else str(self.major[0])
        if self.stage == "release":
            base = f"{major}.{self.minor}"
        elif self.stage == "devel":
            base = f"{major}devel" + (f"-{self.day.isoformat()}" if self.day else "")
        else:
            base = f"{major}{self.stage}{self.number}"
        return base + (f"+{self.label}" if self.label else "")

    @property
    def order(self) -> tuple[object, ...]:
        # Python compares strings by code point with a prefix first: what a label must do.
        return (
            self.major,
            STAGE_RANK[self.stage],
            self.number,
            self.minor,
            self.day or dt.date.min,
            self.label,
        )


majors = st.one_of(
    st.tuples(st.integers(6, 9), st.integers(0, 9)),
    st.tuples(st.integers(10, 999), st.just(0)),
)
labels = st.from_regex(r"\A[a-z0-9][a-z0-9._-]{0,20}\Z")


@st.composite
def named(draw: st.DrawFn, *, label: bool = True) -> Named:
    stage = draw(st.sampled_from(list(STAGE_RANK)))
    return Named(
        major=draw(majors),
        stage=stage,
        number=draw(st.integers(1, 9999)) if stage in ("alpha", "beta", "rc") else 0,
        minor=draw(st.integers(0, 9999)) if stage == "release" else 0,
        day=draw(st.none() | st.dates(dt.date(1996, 1, 1), dt.date(2999, 12, 31)))
        if stage == "devel"
        else None,
        label=draw(labels) if label and draw(st.booleans()) else "",
    )


@given(st.lists(named(), min_size=2, max_size=8, unique_by=lambda n: n.order))
def test_it_orders_versions_as_users_expect(versions: list[Named]) -> None:
    by_key = sorted(versions, key=lambda n: version_parse(n.name).sort_key)
    assert by_key == sorted(versions, key=lambda n: n.order)


@given(named(label=False), labels, named(label=False))
def test_a_patched_build_sorts_right_after_its_base(base: Named, label: str, other: Named) -> None:
    base_key = version_parse(base.name).sort_key
    patched_key = version_parse(f"{base.name}+{label}").sort_key
    other_key = version_parse(other.name).sort_key
    assert base_key < patched_key
    # Nothing unpatched sorts between a base and its patched builds.
    assert not base_key < other_key < patched_key


@given(named())
def test_it_reads_back_what_a_name_says(version: Named) -> None:
    parsed = version_parse(version.name.upper())
    major = (
        f"{version.major[0]}.{version.major[1]}" if version.major[0] < 10 else str(version.major[0])
    )
    assert (parsed.major, parsed.stage, parsed.label) == (major, version.stage, version.label)
    assert parsed.name == version.name.upper()
    assert parsed.base == version.name.upper().partition("+")[0]
    assert all(0 <= part < 2**31 for part in parsed.sort_key), "keys are PostgreSQL int4"


@given(named(label=False), st.integers(0, 99))
def test_a_bare_major_is_satisfied_by_every_server_of_its_major(version: Named, minor: int) -> None:
    major = version_major(version.name)
    assert version_matches(requested=major, version=version.name)
    assert version_matches(requested=major, version=f"{major}.{minor}")
    other = "10" if major != "10" else "11"
    assert not version_matches(requested=other, version=version.name)


def test_it_orders_the_examples_of_the_issue() -> None:
    names = ["14.0", "14beta1", "10.1", "9.6.0", "9.5.4", "14.0+x", "14.1", "14devel-2021-05-01"]
    ordered = sorted(names, key=lambda n: version_parse(n).sort_key)
    assert ordered == [
        "9.5.4",
        "9.6.0",
        "10.1",
        "14devel-2021-05-01",
        "14beta1",
        "14.0",
        "14.0+x",
        "14.1",
    ]


@pytest.mark.parametrize(
    ("name", "major", "date", "commit", "label"),
    [
        ("14devel", "14", None, "", ""),
        ("14devel-2021-05-01", "14", "2021-05-01", "", ""),
        ("14-snapshot-20210501", "14", "2021-05-01", "", ""),
        ("master-2021-05-01", "master", "2021-05-01", "", ""),
        ("master@1A2B3C4", "master", None, "1a2b3c4", ""),
        ("master+pgxact-split", "master", None, "", "pgxact-split"),
        ("master@1a2b3c4+pgxact-split", "master", None, "1a2b3c4", "pgxact-split"),
        ("15.18+slow-commit", "15", None, "", "slow-commit"),
    ],
)
def test_it_parses_snapshots_commits_and_patches(
    name: str, major: str, date: str | None, commit: str, label: str
) -> None:
    parsed = version_parse(name)
    day = parsed.snapshot_date.isoformat() if parsed.snapshot_date else None
    assert (parsed.major, day, parsed.commit, parsed.label) == (major, date, commit, label)


@pytest.mark.parametrize(
    ("requested", "version", "expected"),
    [
        ("9.6", "9.6.24", True),  # a two-number major: 9.6 once read as major 9
        ("9.6", "9.5.4", False),
        ("9.6.24", "9.6.24", True),
        ("9.6.2", "9.6.24", False),
        ("14beta1", "14beta1", True),
        ("14beta1", "14beta2", False),
        ("14rc1", "14.0", False),
        ("17devel", "17devel", True),
        # A commit, a date or a patch cannot be told from what a server reports.
        ("17devel-2024-01-01", "17devel", False),
        ("master@1a2b3c4", "17devel", False),
        ("15.18+slow-commit", "15.18", False),
        ("fifteen", "15.18", False),
    ],
)
def test_it_says_which_server_satisfies_a_request(
    requested: str, version: str, expected: bool
) -> None:
    assert version_matches(requested=requested, version=version) is expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("9", "before 10 a major version has two numbers"),
        ("14devel-2021-02-30", "not a valid date"),
        ("master+", "bad patch label"),
        ("master+a b", "bad patch label"),
        ("master+" + "x" * 64, "bad patch label"),
        ("14.99999", "is not a PostgreSQL version"),
        ("13.3\n+x", "is not a PostgreSQL version"),  # $ would let the newline through
    ],
)
def test_it_says_why_a_name_is_refused(name: str, message: str) -> None:
    with pytest.raises(VersionError, match=message):
        version_parse(name)


# Dated snapshots of a major's branch: where that branch stood on the day.
table_majors = st.sampled_from(sorted(MAJORS))
days = st.dates(dt.date(2010, 1, 1), dt.date(2030, 12, 31))


def _major_name(major: tuple[int, int]) -> str:
    return f"{major[0]}.{major[1]}" if major[0] < 10 else str(major[0])


def _key(name: str) -> list[int]:
    return version_parse(name).sort_key


@given(
    table_majors,
    days,
    st.sampled_from(
        [
            "-snapshot-{iso}",
            "_snapshot_{d8}",
            "-{iso}",
            " snapshot {iso}",
            "snapshot{d8}",
            "-SNAPSHOT-{d8}",
        ]
    ),
)
def test_a_branch_snapshot_orders_the_same_whatever_its_spelling(
    major: tuple[int, int], day: dt.date, spelling: str
) -> None:
    name = _major_name(major) + spelling.format(iso=day.isoformat(), d8=day.strftime("%Y%m%d"))
    assert _key(name) == _key(f"{_major_name(major)}-snapshot-{day.isoformat()}")
    assert version_parse(name).snapshot_date == day


@given(table_majors, days, days)
def test_a_branch_snapshot_moves_forward_with_its_day(
    major: tuple[int, int], first: dt.date, second: dt.date
) -> None:
    early, late = sorted([first, second])
    name = _major_name(major)
    assert _key(f"{name}-snapshot-{early}") <= _key(f"{name}-snapshot-{late}")
    # A development snapshot of that day holds no more than the branch did.
    assert _key(f"{name}devel-{late}") <= _key(f"{name}-snapshot-{late}")


@given(table_majors, days, named(label=False))
def test_a_branch_snapshot_stays_within_its_major(
    major: tuple[int, int], day: dt.date, other: Named
) -> None:
    snapshot = _key(f"{_major_name(major)}-snapshot-{day}")
    if other.major < major:
        assert _key(other.name) < snapshot
    elif other.major > major:
        assert snapshot < _key(other.name)


@given(table_majors, days, st.integers(0, 40))
def test_a_branch_snapshot_stands_among_the_releases_of_its_day(
    major: tuple[int, int], day: dt.date, minor: int
) -> None:
    name, released = _major_name(major), MAJORS[major]
    snapshot = _key(f"{name}-snapshot-{day}")
    if day < released.first_day:
        assert snapshot < _key(f"{name}alpha1") and snapshot < _key(f"{name}beta1")
        return
    if day < released.release_day:
        assert _key(f"{name}{released.first_stage}1") < snapshot < _key(f"{name}.0")
        return
    # Minors come about every three months: at most one more per quarter, plus the first.
    months = (day.year - released.release_day.year) * 12 + day.month - released.release_day.month
    assert _key(f"{name}.0") < snapshot
    if minor > months // 3 + 1:
        assert snapshot < _key(f"{name}.{minor}")
    if minor < months // 3 - 1:
        assert _key(f"{name}.{minor}") < snapshot


def test_it_orders_the_snapshots_of_the_issue() -> None:
    names = [
        "14beta1",
        "13.3",
        "14devel-2021-05-01",
        "13-snapshot-2021-05-01",
        "13.23",
        "13.2",
        "master@1a2b3c4",
        "14.0",
        "14-snapshot-2021-06-01",
        "14.1+patched",
        "14.1",
        "14_snapshot_20211201",
        "14.2",
    ]
    assert sorted(names, key=_key) == [
        "13.2",
        "13-snapshot-2021-05-01",
        "13.3",
        "13.23",
        "14devel-2021-05-01",
        "14beta1",
        "14-snapshot-2021-06-01",
        "14.0",
        "14.1",
        "14.1+patched",
        "14_snapshot_20211201",
        "14.2",
        "master@1a2b3c4",
    ]
    # The development head of a day is that day's 14 snapshot, before 14's first beta.
    assert _key("14-snapshot-2021-05-01") == _key("14devel-2021-05-01")


def test_a_snapshot_of_a_major_newer_than_the_table_is_its_development() -> None:
    assert _key("19-snapshot-2026-05-01") == _key("19devel-2026-05-01")
    assert _key("19-snapshot-2026-05-01") < _key("19beta1")
