"""Dataclasses describing one parsed pgbench benchmark run (``pgbench -T``/``-t`` output).

Units are part of the field names: ``_ms`` milliseconds, ``_s`` seconds, ``tps`` transactions per
second. ``None`` means "the output does not say". Non-finite floats stay ``nan``/``inf`` here and
become ``None`` in :meth:`RunOutput.to_dict` (see :mod:`benchhub_runner.parse.text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .text import dataclass_to_json


@dataclass
class ProgressSample:
    """One ``progress:`` line (``-P``); ``t`` is seconds since start, or epoch seconds."""

    t: float
    tps: float
    latency_ms: float
    stddev_ms: float
    failed: int | None = None
    skipped: int | None = None
    lag_ms: float | None = None
    retried: int | None = None
    retries: int | None = None


@dataclass
class StatementLatency:
    """One per-command line of ``-r``; ``script`` is the 1-based script number."""

    latency_ms: float
    failures: int | None
    retries: int | None
    command: str
    script: int


@dataclass
class ScriptStats:
    """One ``SQL script N:`` section (several scripts, 9.6+); ``transactions`` are successful.

    ``all_transactions`` is 18's ``N transactions (x% of total)``, which also counts failed and
    skipped ones; older versions print only the successful count, so it is ``None`` there.
    """

    number: int
    name: str
    weight: int | None = None
    transactions: int | None = None
    tps: float | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    failed_transactions: int | None = None
    skipped_transactions: int | None = None
    retried_transactions: int | None = None
    all_transactions: int | None = None


@dataclass
class RunOutput:
    """Everything a pgbench run printed that BenchHub keeps.

    ``tps`` excludes connection time: "excluding connections establishing" (<= 13) or "without
    initial connection time" (14+). ``tps_including_connections`` is "including connections
    establishing" (<= 13) or, with ``-C`` on 14+, "including reconnection times" (then ``tps``
    is ``None``: pgbench prints no figure without connection time). ``transactions`` is pgbench's
    "actually processed" count, whose meaning changed (successful only from 15).
    ``aborted`` is true when clients aborted or the run said so; ``errors`` holds those messages
    verbatim, with their continuation lines (``LINE 1:``, carets, ``DETAIL:``) joined by newlines.
    """

    pgbench_version: str | None = None
    server_version: str | None = None
    transaction_type: str | None = None
    scaling_factor: int | None = None
    query_mode: str | None = None
    clients: int | None = None
    threads: int | None = None
    duration_s: int | None = None
    transactions_per_client: int | None = None
    transactions: int | None = None
    failed_transactions: int | None = None
    skipped_transactions: int | None = None
    retried_transactions: int | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    initial_connection_time_ms: float | None = None
    tps: float | None = None
    tps_including_connections: float | None = None
    aborted: bool = False
    errors: list[str] = field(default_factory=list)
    progress: list[ProgressSample] = field(default_factory=list)
    statements: list[StatementLatency] = field(default_factory=list)
    scripts: list[ScriptStats] = field(default_factory=list)
    # Less common figures, kept because they qualify the ones above.
    partition_method: str | None = None
    partitions: int | None = None
    max_tries: int | None = None
    planned_transactions: int | None = None
    serialization_failures: int | None = None
    deadlock_failures: int | None = None
    total_retries: int | None = None
    latency_limit_ms: float | None = None
    late_transactions: int | None = None
    latency_includes_failures: bool = False
    rate_lag_avg_ms: float | None = None
    rate_lag_max_ms: float | None = None
    average_connection_time_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a strict-JSON-ready dict (non-finite floats become ``None``)."""
        return dataclass_to_json(self)
