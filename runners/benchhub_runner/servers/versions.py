"""What a PostgreSQL version name is: its grammar, its major, its order, what satisfies it.

The one definition for all of BenchHub: the agent matches installations to a job's versions with
it, and the server (which imports this package) validates job versions, orders builds and picks a
series for comparison with it. Stdlib only, like the rest of the agent.

Names are read case-insensitively, surrounding space ignored:

    name        base ["+" label]                          15.18+slow-commit, master+pgxact-split
    base        release | prerelease | devel
    release     major ["." minor]                         9.5.4, 13.3; a bare major (14, 9.6)
                                                          names its series and sorts as its .0
    prerelease  major ("alpha" | "beta" | "rc") number    14beta1, 14rc1, 9.6beta3
    devel       head [sep] ["devel" | "snapshot"] [date] ["@" commit], where head is a major
                or "master", and anything but master needs at least one of the optional parts:
                14devel, 14devel-2021-05-01, 14-snapshot-20210501, master-2021-05-01,
                14devel@1a2b3c4, master@1a2b3c4d
    major       two numbers before 10 (9.6, 8.4), one from 10 on (13); "master" is the newest
    date        YYYY-MM-DD or YYYYMMDD, after "-", "_" or a space (sep, as before the word)
    commit      4 to 40 hex digits (carried, never ordered on)
    label       a letter or digit, then letters, digits and . _ - (up to 63): a patched build

Order (`Version.sort_key`): by major; within a major devel < alpha < beta < rc < release; then
the pre-release number, the minor, the snapshot date (a snapshot without one first); a patched
build right after its base (its label's characters extend the base's key), patched builds of one
base by label. A snapshot of a major's branch on a day, named without "devel"
(`13-snapshot-2021-05-01`, `13-20210501`), stands where that branch stood that day
(`benchhub_runner.servers.releases`): as `13devel` of that day before 13's first beta, right after
it until 13.0, then after every 13.x released by that day. So 9.5.4 < 9.6.0 < 10.1 < 13.2 <
13-snapshot-2021-05-01 < 13.3 < 14devel < 14devel-2021-05-01 = 14-snapshot-2021-05-01 < 14beta1 <
14.0 < 14.0+x < 14.1 < master < master+pgxact-split < master-2021-05-01.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from .releases import snapshot_position

Stage = Literal["devel", "alpha", "beta", "rc", "release"]
STAGES: dict[str, int] = {"devel": 0, "alpha": 1, "beta": 2, "rc": 3, "release": 4}
MASTER_MAJOR = 9999
PATCH_MARK = "+"
LABEL_MAX = 63
# Majors and numbers are bounded so every key element fits PostgreSQL's int4.
_MAJOR = r"(?P<major>[1-9]\.\d|[1-9]\d{1,2})"
_NUMBER = r"\d{1,4}"
_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}|\d{8})"
_COMMIT = r"(?:@(?P<commit>[0-9a-f]{4,40}))?"
# \Z, not $: a name must not end in a newline that $ lets through.
_RELEASE = re.compile(rf"^{_MAJOR}(?:\.(?P<minor>{_NUMBER}))?\Z")
_PRERELEASE = re.compile(rf"^{_MAJOR}(?P<stage>alpha|beta|rc)(?P<number>{_NUMBER})\Z")
_DEVEL = re.compile(
    rf"^(?:{_MAJOR}|(?P<master>master))[-_ ]?(?P<stage>devel|snapshot)?"
    rf"(?:[-_ ]?{_DATE})?{_COMMIT}\Z"
)
_ONE_DIGIT = re.compile(r"^[1-9](?![.\d])")
_LABEL = re.compile(rf"^[a-z0-9][a-z0-9._-]{{0,{LABEL_MAX - 1}}}\Z")
_EXAMPLES = "e.g. 9.6, 9.5.4, 13.3, 14beta1, 14devel-2021-05-01, master@1a2b3c4, master+my-patch"


class VersionError(ValueError):
    """The name is not a PostgreSQL version BenchHub understands; the message says what is."""


@dataclass(frozen=True)
class Version:
    """A parsed version name. `name` is as given (stripped); the other fields are lower case.

    `minor` is 0 for a bare major and None for pre-releases and snapshots; `series` says the
    name was a bare major ("14", "9.6"), which stands for every release of that major when
    matched against installations or runs. `label` names a patched build ("" for none).
    `branch` says the name is a dated snapshot of a major's branch, not of its development
    ("13-snapshot-2021-05-01", not "13devel-2021-05-01"): it orders by what that day held.
    """

    name: str
    major: str
    minor: int | None
    stage: Stage
    stage_number: int | None
    snapshot_date: date | None
    commit: str
    label: str = ""
    series: bool = False
    branch: bool = False

    @property
    def base(self) -> str:
        """The name without its patch label: "master+pgxact-split" -> "master"."""
        return self.name.partition(PATCH_MARK)[0]

    @property
    def needs_build(self) -> bool:
        """Whether only a build can be this version: a commit, a snapshot date, a patch or
        master cannot be told from what a server reports, unlike 13.3 or 14beta1."""
        return bool(self.commit or self.snapshot_date or self.label or self.major == "master")

    @property
    def sort_key(self) -> list[int]:
        """Integers in version order; PostgreSQL compares int[] element by element as Python
        compares lists, a key that extends another sorting right after it."""
        if self.major == "master":
            hi, lo = MASTER_MAJOR, 0
        else:
            head, _, tail = self.major.partition(".")
            hi, lo = int(head), int(tail or 0)
        day = int(self.snapshot_date.strftime("%Y%m%d")) if self.snapshot_date else 0
        key = [hi, lo, STAGES[self.stage], self.stage_number or 0, self.minor or 0, day]
        if self.branch and self.snapshot_date:
            held = snapshot_position(major=(hi, lo), day=self.snapshot_date)
            key = [hi, lo, STAGES[held.stage], held.number, held.minor or 0, day]
        return key + [ord(char) for char in self.label]


def version_parse(name: str) -> Version:
    """Parse a version name; raises VersionError saying what is accepted."""
    text = name.strip()
    base, mark, label = text.lower().partition(PATCH_MARK)
    if mark and not _LABEL.match(label):
        raise VersionError(
            f"'{text}' has a bad patch label '{label}': after '+' use up to {LABEL_MAX} letters, "
            "digits and . _ -, starting with a letter or digit"
        )
    version = _parse_base(base)
    if version is None:
        # "9" or "9beta1": the commonest slip, since 9.x majors have two numbers.
        hint = " (before 10 a major version has two numbers)" if _ONE_DIGIT.match(base) else ""
        raise VersionError(f"'{text}' is not a PostgreSQL version{hint}: expected {_EXAMPLES}")
    return Version(
        name=text,
        major=version.major,
        minor=version.minor,
        stage=version.stage,
        stage_number=version.stage_number,
        snapshot_date=version.snapshot_date,
        commit=version.commit,
        label=label,
        series=version.series and not mark,
        branch=version.branch,
    )


def _parse_base(text: str) -> Version | None:
    if match := _RELEASE.match(text):
        minor = match["minor"]
        return Version(
            name=text,
            major=match["major"],
            minor=int(minor or 0),
            stage="release",
            stage_number=None,
            snapshot_date=None,
            commit="",
            series=minor is None,
        )
    if match := _PRERELEASE.match(text):
        return Version(
            name=text,
            major=match["major"],
            minor=None,
            stage=_stage(match["stage"]),
            stage_number=int(match["number"]),
            snapshot_date=None,
            commit="",
        )
    match = _DEVEL.match(text)
    if match is None or not (match["master"] or match["stage"] or match["date"] or match["commit"]):
        return None
    return Version(
        name=text,
        major=match["major"] or "master",
        minor=None,
        stage="devel",
        stage_number=None,
        snapshot_date=_date(match["date"], name=text) if match["date"] else None,
        commit=match["commit"] or "",
        branch=bool(match["major"] and match["stage"] != "devel" and match["date"]),
    )


def _stage(word: str) -> Stage:
    stages: dict[str, Stage] = {"alpha": "alpha", "beta": "beta", "rc": "rc"}
    return stages[word]


def _date(text: str, *, name: str) -> date:
    digits = text.replace("-", "")
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:
        raise VersionError(f"'{name}' has '{text}', which is not a valid date") from None


def version_major(name: str) -> str:
    """The major of a version name or of what a server reports: "9.6.24" -> "9.6",
    "15.19" -> "15", "14beta1" -> "14", "master@1a2b3c4" -> "master"."""
    return version_parse(name).major


def version_matches(*, requested: str, version: str) -> bool:
    """Whether a server reporting `version` ("9.6.24", "14beta1", "17devel") serves a request.

    A bare major ("14", "9.6") takes any server of that major, pre-releases included; a release
    its exact minor ("13.23"); a pre-release or snapshot its exact stage. A commit, a snapshot
    date or a patch label cannot be told from what a server reports, so such a request (and one
    that is not a version at all) matches no installation: it names a build.
    """
    try:
        wanted, found = version_parse(requested), version_parse(version)
    except VersionError:
        return False
    if wanted.major != found.major:
        return False
    if wanted.series:
        return True
    if wanted.needs_build:
        return False
    return (wanted.stage, wanted.stage_number, wanted.minor) == (
        found.stage,
        found.stage_number,
        found.minor,
    )
