"""Parse ``pgbench -i`` (initialisation) output, 9.2 to 18, into an :class:`InitOutput`.

Everything ``pgbench -i`` prints goes to stderr. Newer versions say more: 13+ end with
``done in X s (drop tables X s, create tables X s, client-side generate X s, vacuum X s,
primary keys X s[, foreign keys X s]).``; 11-12 only list the steps and end with ``done.``;
9.2-10 print ``set primary key(s)...``/``vacuum...`` and no timings at all. Timings a version does
not print are ``None``. Row counts come from the tuples progress lines (client-side generation
only; server-side generation, ``-I G``, prints none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .errors import PgbenchParseError, never_raises_other
from .text import FLOAT, dataclass_to_json, split_lines, to_float, to_int

_STEPS = {
    "dropping old tables...": "drop tables",
    "creating tables...": "create tables",
    "vacuum...": "vacuum",
    "vacuuming...": "vacuum",
    "set primary key...": "primary keys",
    "set primary keys...": "primary keys",
    "creating primary keys...": "primary keys",
    "set foreign keys...": "foreign keys",
    "creating foreign keys...": "foreign keys",
}
_GENERATE = re.compile(r"^generating data(?: \((?P<side>client|server)-side\))?\.\.\.$")
_PARTITIONS = re.compile(r"^creating (\d+) partitions\.\.\.$")
_TUPLES = re.compile(
    r"^(?P<done>\d+) of (?P<total>\d+) tuples \(\d+%\)(?: of (?P<table>\S+))? done "
    rf"\(elapsed (?P<elapsed>{FLOAT}) s, remaining {FLOAT} s\)\.?$"
)
_TUPLES_92 = re.compile(r"^(?P<done>\d+) tuples done\.$")
_DONE_IN = re.compile(rf"^done in (?P<total>{FLOAT}) s \((?P<steps>.*)\)\.$")
_STEP_TIME = re.compile(rf"^(?P<name>.+) (?P<seconds>{FLOAT}) s$")
_TIMING_FIELDS = {
    "drop tables": "drop_tables_s",
    "create tables": "create_tables_s",
    "client-side generate": "generate_s",
    "server-side generate": "generate_s",
    "vacuum": "vacuum_s",
    "primary keys": "primary_keys_s",
    "foreign keys": "foreign_keys_s",
}
_ERROR = re.compile(r"^(?:\S+: (?:error|fatal): |(?:ERROR|FATAL):  )")


@dataclass
class InitOutput:
    """What ``pgbench -i`` reported; ``_s`` fields are seconds, ``None`` when not printed.

    ``rows`` is the number of ``pgbench_accounts`` rows generated (100000 x scale), from the last
    tuples line. ``steps`` lists the steps in the order printed (``drop tables``, ``create
    tables``, ``generate``, ``vacuum``, ``primary keys``, ``foreign keys``). ``complete`` is true
    when the final ``done.``/``done in`` line was printed.
    """

    rows: int | None = None
    rows_generated: int | None = None
    generate_side: str | None = None
    partitions: int | None = None
    steps: list[str] = field(default_factory=list)
    total_s: float | None = None
    drop_tables_s: float | None = None
    create_tables_s: float | None = None
    generate_s: float | None = None
    vacuum_s: float | None = None
    primary_keys_s: float | None = None
    foreign_keys_s: float | None = None
    generate_elapsed_s: float | None = None
    complete: bool = False
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return a strict-JSON-ready dict (non-finite floats become ``None``)."""
        return dataclass_to_json(self)


def _step(out: InitOutput, line: str) -> bool:
    if line in _STEPS:
        out.steps.append(_STEPS[line])
    elif match := _GENERATE.match(line):
        out.steps.append("generate")
        out.generate_side = match["side"] or "client"
    elif match := _PARTITIONS.match(line):
        out.partitions = to_int(match[1])
    else:
        return False
    return True


def _tuples(out: InitOutput, line: str) -> bool:
    if match := _TUPLES.match(line):
        # 17+ at huge scales also load tellers/branches this way; rows are about accounts.
        if match["table"] not in (None, "pgbench_accounts"):
            return True
        out.rows = to_int(match["total"])
        out.rows_generated = to_int(match["done"])
        out.generate_elapsed_s = to_float(match["elapsed"])
    elif match := _TUPLES_92.match(line):
        # 9.2 does not print the total; the last line before "set primary key..." is it.
        out.rows = out.rows_generated = to_int(match["done"])
    else:
        return False
    return True


def _done(out: InitOutput, line: str) -> bool:
    if line == "vacuum...done.":  # 9.2: vacuum is the last step and there is no "done."
        out.steps.append("vacuum")
        out.complete = True
        return True
    if line == "done.":
        out.complete = True
        return True
    match = _DONE_IN.match(line)
    if match is None:
        return False
    out.complete = True
    out.total_s = to_float(match["total"])
    for part in match["steps"].split(", "):
        step = _STEP_TIME.match(part)
        if step and step["name"] in _TIMING_FIELDS:
            setattr(out, _TIMING_FIELDS[step["name"]], to_float(step["seconds"]))
            if step["name"].endswith("-side generate"):
                out.generate_side = step["name"].split("-", 1)[0]
    return True


@never_raises_other
def parse_init_output(text: str) -> InitOutput:
    """Parse what ``pgbench -i`` printed (stderr, or stdout+stderr) in any version 9.2-18.

    Raises :class:`PgbenchParseError` when there is no ``creating tables...`` line, no tuples
    progress line and no ``done in`` line, i.e. when the text is not ``pgbench -i`` output.
    """
    out = InitOutput()
    for line in split_lines(text):
        if not (_step(out, line) or _tuples(out, line) or _done(out, line)) and _ERROR.match(line):
            out.errors.append(line)
    # "done." or "vacuum..." alone prove nothing; every -i prints one of these three.
    if "create tables" not in out.steps and out.rows is None and out.total_s is None:
        raise PgbenchParseError(
            "not pgbench -i output: no 'creating tables...' line, no 'N of M tuples' line and "
            "no 'done in X s (...)' line found"
        )
    return out
