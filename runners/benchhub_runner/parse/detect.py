"""Tell which kind of pgbench text a file holds, and parse it as that kind.

The kinds are ``run`` (a benchmark run's stdout+stderr), ``init`` (``pgbench -i``), ``txlog``
(``-l`` per-transaction log) and ``agglog`` (``--aggregate-interval`` log). Detection looks at
the first non-blank lines for the log shapes, then for run markers, then for init markers: a
capture of ``pgbench -i && pgbench ...`` is a run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from .agglog import parse_aggregate_log
from .errors import PgbenchParseError, never_raises_other
from .init import InitOutput, parse_init_output
from .result import parse_run_output
from .run_model import RunOutput
from .series import LogSeries
from .text import split_lines
from .txlog import parse_transaction_log

Kind = Literal["run", "init", "txlog", "agglog"]
KINDS: tuple[Kind, ...] = ("run", "init", "txlog", "agglog")
ParseResult = RunOutput | InitOutput | LogSeries

_TXLOG = re.compile(r"^\d+ \d+ (?:\d+|skipped|failed|serialization|deadlock|other) \d+ \d+ \d+")
_AGGLOG = re.compile(r"^\d+(?: \d+){5}(?:(?: \d+){4}(?: \d+)?|(?: \d+){9,10})?$")
_RUN = re.compile(
    r"^(?:pgbench \(|progress: |transaction type: |tps = |number of transactions actually |"
    r"SQL script \d+: |latency average)"
)
_INIT = re.compile(r"^(?:creating tables\.\.\.|done in |\d+ of \d+ tuples |\d+ tuples done\.)")

_PARSERS: dict[Kind, Callable[[str], ParseResult]] = {
    "run": parse_run_output,
    "init": parse_init_output,
    "txlog": parse_transaction_log,
    "agglog": parse_aggregate_log,
}


def _is_txlog_line(line: str) -> bool:
    """A 6-integer line fits both logs; in a txlog the 5th column (epoch) dwarfs the client id."""
    if not _TXLOG.match(line):
        return False
    fields = line.split(" ")
    return not fields[2].isdigit() or len(fields) in (7, 8) or len(fields[4]) > len(fields[0])


@never_raises_other
def detect_kind(text: str) -> Kind:
    """Return the kind of pgbench text; :class:`PgbenchParseError` if it is none of them."""
    lines = [line for line in split_lines(text) if line.strip()]
    head = lines[:20]
    if head and all(_is_txlog_line(line) for line in head):
        return "txlog"
    if head and all(_AGGLOG.match(line) for line in head):
        return "agglog"
    if any(_RUN.match(line) for line in lines):
        return "run"
    if any(_INIT.match(line) for line in lines):
        return "init"
    raise PgbenchParseError(
        "not pgbench output: no version banner, 'progress:' line or results block (run), no "
        "'creating tables...'/'done in' line (pgbench -i) and no log lines (-l) found"
    )


@never_raises_other
def parse_text(text: str, kind: Kind | Literal["auto"] = "auto") -> ParseResult:
    """Parse ``text`` as ``kind`` (detected when ``"auto"``); the result has ``to_dict()``.

    Returns a :class:`RunOutput`, :class:`InitOutput` or :class:`LogSeries`.
    """
    if kind == "auto":
        kind = detect_kind(text)
    if kind not in _PARSERS:
        raise PgbenchParseError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    return _PARSERS[kind](text)
