"""Parsers for everything pgbench writes, versions 9.2 to 18 (stdlib only, no Django).

Public API:

* :func:`parse_run_output` -> :class:`RunOutput`: a benchmark run's stdout+stderr.
* :func:`parse_init_output` -> :class:`InitOutput`: ``pgbench -i`` output.
* :func:`parse_transaction_log` -> :class:`LogSeries`: a ``-l`` per-transaction log, bucketed into
  intervals with latency percentiles.
* :func:`parse_aggregate_log` -> :class:`LogSeries`: an ``--aggregate-interval`` log.
* :func:`detect_kind` and :func:`parse_text`: pick the parser for a file.
* :func:`runs_split`: the runs of a pasted text that holds several, one after another.

Every parser reads text as users paste it (indented, quoted, fenced, summary lines joined, cut):
see :mod:`.pasted`.

Every function raises only :class:`PgbenchParseError`, whose message says what was missing.
Every result has ``to_dict()``, which returns strict JSON data: non-finite floats (pgbench's
``nan``/``NaN``/``inf``/``Infinity``) become ``None`` there, while the dataclasses keep them as
``float('nan')``/``float('inf')``.
"""

from .agglog import parse_aggregate_log
from .detect import KINDS, Kind, detect_kind, parse_text
from .errors import PgbenchParseError
from .init import InitOutput, parse_init_output
from .pasted import runs_split
from .result import parse_run_output
from .run_model import ProgressSample, RunOutput, ScriptStats, StatementLatency
from .series import IntervalStats, LogSeries
from .txlog import parse_transaction_log

__all__ = [
    "KINDS",
    "InitOutput",
    "IntervalStats",
    "Kind",
    "LogSeries",
    "PgbenchParseError",
    "ProgressSample",
    "RunOutput",
    "ScriptStats",
    "StatementLatency",
    "detect_kind",
    "parse_aggregate_log",
    "parse_init_output",
    "parse_run_output",
    "parse_text",
    "parse_transaction_log",
    "runs_split",
]
