"""Validation of a result's `evidence` (docs/runner-api.md, "Evidence"): what explains a level.

The agent sends, per result, server statistics deltas over the measurement, the shares of wait
events, latency percentiles from pgbench's sampled log, the top statements and, on one level, a
CPU profile as folded stacks. Every part is optional. The bounds are the contract's; anything
else is refused with its path (`results[3].evidence.waits.events`), so an upload with one bad part
stores nothing. Hand-written rather than nested serializers: the shapes are small maps of
numbers whose keys (view columns, wait events) are data, not fields.
"""

import math
import re
from itertools import pairwise
from typing import Any

from rest_framework import serializers

STATS_VIEWS = ("database", "bgwriter", "checkpointer", "wal", "io")
MAX_STATS_KEYS = 100
MAX_WAIT_EVENTS = 50
MAX_STATEMENTS = 20
MAX_QUERY_CHARS = 2000
MAX_BINS = 100
MAX_FOLDED_BYTES = 1_048_576
MAX_FOLDED_LINES = 2000
MAX_UNAVAILABLE = 20
# Shares are rounded by the agent; their sum may miss 1 by that rounding, not by more.
SHARE_SUM_SLACK = 0.05
COLUMN = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
WAIT_EVENT = re.compile(r"^(CPU|[A-Za-z]{1,40}:[A-Za-z0-9_:.\- ]{1,100})$")
FOLDED_LINE = re.compile(r"^(\S.*) ([0-9]{1,18})$")
PERCENTILES = ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")


class Invalid(Exception):
    """A bad value at `path` (a list of keys and indexes under `evidence`)."""

    def __init__(self, path: list[str], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _number(
    value: Any, path: list[str], *, integer: bool = False, maximum: float = math.inf
) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(path, "A number is required.")
    if integer and not isinstance(value, int):
        raise Invalid(path, "An integer is required.")
    if not math.isfinite(value):
        raise Invalid(path, "A finite number is required (not NaN or infinity).")
    if value < 0:
        raise Invalid(path, "Ensure this value is greater than or equal to 0.")
    if value > maximum:
        raise Invalid(path, f"Ensure this value is less than or equal to {maximum:g}.")
    return value


def _object(value: Any, path: list[str], keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(path, "Expected an object.")
    if keys is not None:
        for key in value:
            if key not in keys:
                raise Invalid([*path, str(key)], "Unknown field.")
    return value


def _string(value: Any, path: list[str], *, max_length: int) -> str:
    if not isinstance(value, str):
        raise Invalid(path, "A string is required.")
    if len(value) > max_length:
        raise Invalid(path, f"Ensure this field has no more than {max_length} characters.")
    return value


def _counters(value: Any, path: list[str]) -> dict[str, float]:
    """A view's numeric deltas: column name -> count or time, each >= 0."""
    section = _object(value, path)
    if len(section) > MAX_STATS_KEYS:
        raise Invalid(path, f"At most {MAX_STATS_KEYS} keys are accepted.")
    for key, number in section.items():
        if not COLUMN.match(key):
            raise Invalid([*path, key], "Not a column name.")
        _number(number, [*path, key])
    return section


def _stats(value: Any, path: list[str]) -> dict[str, Any]:
    stats = _object(value, path, (*STATS_VIEWS, "wal_bytes", "checkpoints"))
    for view in STATS_VIEWS:
        if stats.get(view) is not None:
            _counters(stats[view], [*path, view])
    for key in ("wal_bytes", "checkpoints"):
        if stats.get(key) is not None:
            _number(stats[key], [*path, key], integer=True)
    return stats


def _waits(value: Any, path: list[str]) -> dict[str, Any]:
    waits = _object(value, path, ("interval_ms", "samples", "backend_samples", "events"))
    if waits.get("interval_ms") is not None:
        _number(waits["interval_ms"], [*path, "interval_ms"], maximum=3_600_000)
    for key in ("samples", "backend_samples"):
        if waits.get(key) is not None:
            _number(waits[key], [*path, key], integer=True)
    events = _object(waits.get("events") or {}, [*path, "events"])
    if len(events) > MAX_WAIT_EVENTS:
        raise Invalid([*path, "events"], f"At most {MAX_WAIT_EVENTS} wait events are accepted.")
    for key, share in events.items():
        if not WAIT_EVENT.match(key):
            raise Invalid([*path, "events", key], 'A key is "<type>:<event>" or "CPU".')
        _number(share, [*path, "events", key], maximum=1)
    if sum(events.values()) > 1 + SHARE_SUM_SLACK:
        raise Invalid([*path, "events"], "The shares sum to more than 1.")
    return waits


def _histogram(value: Any, path: list[str]) -> dict[str, Any]:
    histogram = _object(value, path, ("edges_ms", "counts"))
    edges, counts = histogram.get("edges_ms"), histogram.get("counts")
    if not isinstance(edges, list) or not isinstance(counts, list):
        raise Invalid(path, "A histogram has the lists edges_ms and counts.")
    if len(counts) > MAX_BINS:
        raise Invalid([*path, "counts"], f"At most {MAX_BINS} bins are accepted.")
    if len(edges) != len(counts) + 1:
        raise Invalid([*path, "edges_ms"], "A histogram has one edge more than it has counts.")
    for index, edge in enumerate(edges):
        _number(edge, [*path, "edges_ms", str(index)])
    if any(b <= a for a, b in pairwise(edges)):
        raise Invalid([*path, "edges_ms"], "The edges increase.")
    for index, count in enumerate(counts):
        _number(count, [*path, "counts", str(index)], integer=True)
    return histogram


def _latency(value: Any, path: list[str]) -> dict[str, Any]:
    latency = _object(value, path, ("sampling_rate", "transactions", *PERCENTILES, "histogram"))
    if latency.get("sampling_rate") is not None:
        rate = _number(latency["sampling_rate"], [*path, "sampling_rate"], maximum=1)
        if rate == 0:
            raise Invalid([*path, "sampling_rate"], "A sampling rate is above 0.")
    if latency.get("transactions") is not None:
        _number(latency["transactions"], [*path, "transactions"], integer=True)
    given = [
        (k, _number(latency[k], [*path, k])) for k in PERCENTILES if latency.get(k) is not None
    ]
    for (_, low), (key, high) in pairwise(given):
        if high < low:
            raise Invalid([*path, key], "Percentiles do not decrease (p50 <= p90 <= ... <= max).")
    if latency.get("histogram") is not None:
        _histogram(latency["histogram"], [*path, "histogram"])
    return latency


def _statements(value: Any, path: list[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise Invalid(path, "Expected a list.")
    if len(value) > MAX_STATEMENTS:
        raise Invalid(path, f"At most {MAX_STATEMENTS} statements are accepted.")
    for index, item in enumerate(value):
        where = [*path, str(index)]
        statement = _object(item, where, ("query", "calls", "total_ms", "mean_ms"))
        _string(statement.get("query"), [*where, "query"], max_length=MAX_QUERY_CHARS)
        for key in ("calls", "total_ms", "mean_ms"):
            if statement.get(key) is not None:
                _number(statement[key], [*where, key], integer=key == "calls")
    return value


def _profile(value: Any, path: list[str]) -> dict[str, Any]:
    profile = _object(value, path, ("tool", "frequency_hz", "seconds", "folded"))
    if profile.get("tool") is not None:
        _string(profile["tool"], [*path, "tool"], max_length=50)
    for key in ("frequency_hz", "seconds"):
        if profile.get(key) is not None:
            _number(profile[key], [*path, key], maximum=1_000_000)
    folded = _string(profile.get("folded", ""), [*path, "folded"], max_length=MAX_FOLDED_BYTES)
    if len(folded.encode()) > MAX_FOLDED_BYTES:
        raise Invalid([*path, "folded"], f"A profile is at most {MAX_FOLDED_BYTES} bytes.")
    lines = folded.splitlines()
    if len(lines) > MAX_FOLDED_LINES:
        raise Invalid([*path, "folded"], f"A profile is at most {MAX_FOLDED_LINES} lines.")
    for number, line in enumerate(lines, start=1):
        if line and not FOLDED_LINE.match(line):
            raise Invalid(
                [*path, "folded"], f'Line {number} is not "<frames separated by ;> <count>".'
            )
    return profile


def _unavailable(value: Any, path: list[str]) -> dict[str, str]:
    reasons = _object(value, path)
    if len(reasons) > MAX_UNAVAILABLE:
        raise Invalid(path, f"At most {MAX_UNAVAILABLE} reasons are accepted.")
    for key, reason in reasons.items():
        _string(key, [*path, key], max_length=100)
        _string(reason, [*path, key], max_length=2000)
    return reasons


PARTS = {
    "stats": _stats,
    "waits": _waits,
    "latency": _latency,
    "statements": _statements,
    "profile": _profile,
    "unavailable": _unavailable,
}


def _nested(path: list[str], message: str) -> Any:
    """The error as DRF nests it, so the API's error shape names the whole path."""
    detail: Any = [message]
    for key in reversed(path):
        detail = {key: detail}
    return detail


class EvidenceField(serializers.Field):
    """A result's evidence: None, or an object of the optional parts in PARTS (each None or
    valid). Returns the parts given, nulls dropped."""

    def to_internal_value(self, data: Any) -> dict[str, Any] | None:
        try:
            evidence = _object(data, [], tuple(PARTS))
            return {
                part: check(evidence[part], [part])
                for part, check in PARTS.items()
                if evidence.get(part) is not None
            }
        except Invalid as exc:
            raise serializers.ValidationError(_nested(exc.path, exc.message)) from None

    def to_representation(self, value: Any) -> Any:
        return value
