"""A job's settings as each PostgreSQL major can take them.

A job names its settings once (``max_wal_size = 4GB``) and runs them on every server it compares.
Settings come and go between majors: before 9.5 the WAL budget is ``checkpoint_segments``, before
13 the WAL kept for standbys is ``wal_keep_segments``; ``jit`` exists from 11,
``stats_temp_directory`` until 14. An unknown name in postgresql.conf stops the server from
starting, so each setting is, for each server:

- applied as given, when the server has it (or it is an extension's ``name.setting``);
- translated, when a renamed setting of this major carries its meaning (the value converted,
  WAL counted in 16 MB segments, the default segment size);
- not applied, when the server has no such setting and nothing carries its meaning.

Both of the last two are reported with the run (``configuration.translated`` and
``configuration.not_applied`` of the upload), never dropped silently. The names a server has come
from the binary itself (``postgres --describe-config``), which leaves out developer options; a
name it does not list is asked of ``postgres -C`` before it is called unknown.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RENAMES", "Rename", "SettingsPlan", "describe_config", "settings_plan"]

SEGMENT_MB = 16
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(kB|MB|GB|TB)?\s*", re.IGNORECASE)
_UNIT_MB = {"kb": 1 / 1024, "mb": 1, "gb": 1024, "tb": 1024 * 1024}


def _megabytes(value: str) -> float:
    """A size setting in MB ("4GB", "512MB", "1024" meaning MB, the unit of the sizes here)."""
    match = _SIZE.fullmatch(value)
    if match is None:
        raise ValueError(f"{value!r} is not a size (a number with kB, MB, GB or TB)")
    number, unit = match.groups()
    return float(number) * _UNIT_MB[(unit or "MB").lower()]


def _segments(value: str) -> int:
    match = re.fullmatch(r"\s*(\d+)\s*", value)
    if match is None:
        raise ValueError(f"{value!r} is not a whole number of WAL segments")
    return int(match.group(1))


@dataclass(frozen=True)
class Rename:
    """``new`` replaced ``old``; ``to_old`` and ``to_new`` convert a value across, and
    ``meaning`` says how, for the report."""

    new: str
    old: str
    to_old: Callable[[str], str]
    to_new: Callable[[str], str]
    meaning: str


RENAMES: tuple[Rename, ...] = (
    # 9.5's release notes: max_wal_size = (3 * checkpoint_segments) * 16MB.
    Rename(
        new="max_wal_size",
        old="checkpoint_segments",
        to_old=lambda v: str(max(1, math.ceil(_megabytes(v) / (3 * SEGMENT_MB)))),
        to_new=lambda v: f"{_segments(v) * 3 * SEGMENT_MB}MB",
        meaning="max_wal_size = 3 x checkpoint_segments x 16MB",
    ),
    Rename(
        new="wal_keep_size",
        old="wal_keep_segments",
        to_old=lambda v: str(math.ceil(_megabytes(v) / SEGMENT_MB)),
        to_new=lambda v: f"{_segments(v) * SEGMENT_MB}MB",
        meaning="wal_keep_size = wal_keep_segments x 16MB",
    ),
)


@dataclass
class SettingsPlan:
    """What goes into one server's postgresql.conf for a job, and what did not as given."""

    applied: dict[str, str] = field(default_factory=dict)
    translated: dict[str, str] = field(default_factory=dict)
    not_applied: dict[str, str] = field(default_factory=dict)


def describe_config(postgres: Path, *, env: Mapping[str, str] | None = None) -> frozenset[str]:
    """The setting names a server binary lists (``postgres --describe-config``: the first
    column of each line). Needs no data directory, and runs as root too."""
    done = subprocess.run(
        [str(postgres), "--describe-config"],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
        env=dict(env) if env is not None else None,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"{postgres} --describe-config failed: {done.stderr.strip()[-500:]}")
    return frozenset(line.split("\t", 1)[0] for line in done.stdout.splitlines() if line)


def settings_plan(
    overrides: Mapping[str, str],
    *,
    known: frozenset[str],
    server: str,
    exists: Callable[[str], bool] = lambda name: False,
) -> SettingsPlan:
    """Each override applied, translated or reported for a server whose settings are `known`.

    `server` names it in the report ("PostgreSQL 12.22"); `exists(name)` is asked about a name
    `known` lacks before it is called unknown (developer options are not listed). A value a
    translation cannot read is reported, not guessed.
    """
    plan = SettingsPlan()
    has = _Membership(known, exists)
    for name, value in overrides.items():
        if "." in name or has(name):
            plan.applied[name] = value
            continue
        rename = _rename_for(name, has)
        if rename is None:
            plan.not_applied[name] = f"{server} has no setting {name}"
            continue
        target, convert = rename
        try:
            converted = convert[1](value)
        except ValueError as exc:
            plan.not_applied[name] = f"{server} takes {target} instead; {exc}"
            continue
        if target in overrides:
            plan.not_applied[name] = f"{server} takes {target}, which the job also sets"
            continue
        plan.applied[target] = converted
        plan.translated[name] = f"{target} = {converted} ({server} has no {name}; {convert[0]})"
    return plan


class _Membership:
    def __init__(self, known: frozenset[str], exists: Callable[[str], bool]) -> None:
        self.known = known
        self.exists = exists
        self.asked: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        if name in self.known:
            return True
        if name not in self.asked:
            self.asked[name] = bool(self.exists(name))
        return self.asked[name]


def _rename_for(
    name: str, has: Callable[[str], bool]
) -> tuple[str, tuple[str, Callable[[str], str]]] | None:
    """The name this server uses for `name`, with the conversion, if a rename covers it."""
    for rename in RENAMES:
        if name == rename.new and has(rename.old):
            return rename.old, (rename.meaning, rename.to_old)
        if name == rename.old and has(rename.new):
            return rename.new, (rename.meaning, rename.to_new)
    return None
