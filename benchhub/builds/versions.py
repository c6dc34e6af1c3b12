"""Parse PostgreSQL version names as users write them, into an orderable key.

Accepted names (case-insensitive, surrounding space ignored):
- releases: `9.5.4`, `9.6.0`, `10.1`, `13.3`, `14.0`; a bare major (`14`, `9.6`) means its `.0`
- pre-releases: `14beta1`, `14rc1`, `14alpha2`, `9.6beta3`
- development snapshots: `14devel`, `14devel-2021-05-01`, `14-snapshot-20210501`,
  `master-2021-05-01`
- commits: `14devel@1a2b3c4`, `master@1a2b3c4d` (a commit is carried, never ordered on)
Before 10 the major version is two numbers (9.5), from 10 on one (13). `master` is the newest.

Order: by major; within a major devel < alpha < beta < rc < release; then the pre-release number,
the minor, and the snapshot date. So 9.5.4 < 9.6.0 < 10.1 < 13.3 < 14beta1 < 14.0 < 14.1.
"""

import re
from dataclasses import dataclass
from datetime import date

STAGES = {"devel": 0, "snapshot": 0, "alpha": 1, "beta": 2, "rc": 3, "release": 4}
MASTER_MAJOR = 9999

_DATE = r"(?P<date>\d{4}-?\d{2}-?\d{2})"
_PATTERNS = [
    re.compile(r"^(?P<major>9\.\d|[1-9]\d*)\.(?P<minor>\d+)$"),
    re.compile(r"^(?P<major>9\.\d|[1-9]\d*)$"),
    re.compile(r"^(?P<major>9\.\d|[1-9]\d*)(?P<stage>alpha|beta|rc)(?P<num>\d+)$"),
    re.compile(
        r"^(?P<major>9\.\d|[1-9]\d*|master)-?(?P<stage>devel|snapshot)?"
        rf"(?:[-_ ]?{_DATE})?(?:@(?P<commit>[0-9a-f]{{4,40}}))?$"
    ),
]


class VersionError(ValueError):
    """The name is not a PostgreSQL version BenchHub understands."""


@dataclass(frozen=True)
class Version:
    name: str
    major: str
    minor: int | None
    stage: str
    stage_number: int | None
    snapshot_date: date | None
    commit: str

    @property
    def sort_key(self) -> list[int]:
        """Integers in comparison order; PostgreSQL compares int[] element by element."""
        if self.major == "master":
            hi, lo = MASTER_MAJOR, 0
        else:
            head, _, tail = self.major.partition(".")
            hi, lo = int(head), int(tail or 0)
        day = int(self.snapshot_date.strftime("%Y%m%d")) if self.snapshot_date else 0
        return [hi, lo, STAGES[self.stage], self.stage_number or 0, self.minor or 0, day]


def _parse_date(text: str) -> date:
    digits = text.replace("-", "")
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:
        raise VersionError(f"'{text}' is not a valid date") from None


def version_parse(name: str) -> Version:
    """Parse a version name; raises VersionError saying what is accepted."""
    text = name.strip().lower()
    for pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        is_snapshot = groups.get("stage") in ("devel", "snapshot") or bool(
            groups.get("date") or groups.get("commit")
        )
        if groups["major"] == "master" or is_snapshot:
            stage = "devel"
        else:
            stage = groups.get("stage") or "release"
        minor = groups.get("minor")
        if minor is None and stage == "release":
            minor = "0"
        return Version(
            name=name.strip(),
            major=groups["major"],
            minor=int(minor) if minor is not None else None,
            stage=stage,
            stage_number=int(groups["num"]) if groups.get("num") else None,
            snapshot_date=_parse_date(groups["date"]) if groups.get("date") else None,
            commit=groups.get("commit") or "",
        )
    raise VersionError(
        f"'{name}' is not a PostgreSQL version: expected e.g. 9.5.4, 13.3, 14beta1, 14rc1, "
        "14devel-2021-05-01 or master@1a2b3c4"
    )
