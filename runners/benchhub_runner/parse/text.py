"""Text normalisation and number parsing shared by all pgbench parsers.

pgbench output reaches us through terminals, files and pipes, so before any line is classified
the text is normalised the same way everywhere: ANSI colour codes are removed (``PG_COLOR``),
lines are split on ``\\r\\n``, ``\\n`` and a lone ``\\r`` (the ``-i`` progress line uses
``\\r`` on a terminal) and trailing whitespace is dropped (newer versions pad progress lines
with spaces). Leading whitespace is kept: it tells per-statement lines apart. Text pasted into a
wiki, a README or an issue is unwrapped first (:mod:`benchhub_runner.parse.pasted`).

Non-finite numbers: pgbench prints ``nan``/``-nan``/``inf`` (<= 11) or ``NaN``/``Infinity`` (12+)
when it divides by zero. The parsers keep them as Python ``float('nan')``/``inf`` in their
dataclasses, and every ``to_dict()`` turns them into ``None`` so that the result is strict JSON.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict
from typing import Any, cast

from .errors import PgbenchParseError
from .pasted import break_lines, unwrap_lines

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# A float as any pgbench version prints it, including the non-finite spellings.
FLOAT = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|inf|Infinity))"
INT = r"\d+"
_COUNTER_LIMIT = 2**64


def split_lines(text: str) -> list[str]:
    """Return the normalised lines of ``text`` (see the module docstring), with what pasting
    adds (fences, quote markers, a code block's indentation, joined lines) undone."""
    raw = [line.rstrip() for line in _LINE_BREAK.split(_ANSI.sub("", break_lines(text)))]
    return unwrap_lines(raw)


def to_int(digits: str) -> int:
    """Parse a pgbench counter (at most 64 bits); anything larger is a parse error.

    The bound keeps every later computation (µs to ms, means, sums of squares) within float
    range, so damaged numbers cannot overflow there.
    """
    try:
        value = int(digits)
    except ValueError as exc:  # Python refuses int() of more than 4300 digits
        raise PgbenchParseError(f"not a pgbench counter: {digits[:20]!r}...") from exc
    if abs(value) >= _COUNTER_LIMIT:
        raise PgbenchParseError(f"number too large for a pgbench counter: {digits[:30]}...")
    return value


def to_float(text: str) -> float:
    """Parse a pgbench float; non-finite spellings become ``nan``/``inf`` floats."""
    try:
        return float(text)
    except ValueError as exc:
        raise PgbenchParseError(f"not a number: {text[:40]!r}") from exc


def json_safe(value: Any) -> Any:
    """Return ``value`` with every non-finite float replaced by ``None`` (strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def dataclass_to_json(instance: Any) -> dict[str, Any]:
    """``asdict`` of a result dataclass, made strict-JSON-ready with :func:`json_safe`."""
    return cast(dict[str, Any], json_safe(asdict(instance)))
