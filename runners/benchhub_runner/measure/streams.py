"""Streams: the pgbench processes of one measurement, and how their figures combine.

A workload without `streams` is one measured stream of its own builtin or scripts, run as one
pgbench process, exactly as before streams existed. A workload with streams runs them at once:
- a *measured* stream counts toward the level's figure (the workload's `combine`: the sum of the
  measured streams' tps, or the one measured stream's);
- a *background* stream (E2's idle connections in `pg_sleep`) is started first, the measurement
  waits until its connections are open, and it is stopped when the measured streams end; its own
  figures are not a measurement, only how many connections it held (`established`);
- a *per-client* stream is N single-client processes (`-c 1 -j 1`), one per client of the level,
  `{n}` in its scripts standing for the process number (E1's one table per connection), whose
  figures are summed.

Everything here is pure (plans and arithmetic); level.py runs the processes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jobspec.plan import Role
from ..jobspec.workload import Stream, Workload

# Connections the server keeps beyond the streams' own: psql for setup and checkpoints, the
# agent's pg_stat_activity polls, and the superuser reserve.
CONNECTION_MARGIN = 10
DEFAULT_MAX_CONNECTIONS = 100
# File descriptors per pgbench connection, plus a base for the agent itself and its pipes.
FDS_BASE = 1024


def workload_streams(workload: Workload) -> tuple[Stream, ...]:
    """The workload's streams; without any, its own builtin or scripts as one measured stream."""
    if workload.streams:
        return workload.streams
    main = Stream(
        name="main",
        role=Role.MEASURED,
        builtin=workload.builtin,
        scripts=workload.scripts,
        clients=None,
        threads=None,
        per_client=False,
        rows_per_transaction=None,
    )
    return (main,)


def uses_builtin(workload: Workload) -> bool:
    """Whether any stream runs a builtin script, which needs the `pgbench -i` tables."""
    return any(
        stream.builtin or any(script.builtin for script in stream.scripts)
        for stream in workload_streams(workload)
    )


def connections_peak(workload: Workload, levels: Sequence[int]) -> int:
    """The most connections the streams hold at once, over every level."""
    streams = workload_streams(workload)
    return max(sum(s.level_clients(level) for s in streams) for level in levels)


def connections_needed(workload: Workload, levels: Sequence[int]) -> int:
    """The most connections the streams hold at once, over every level, plus the margin."""
    return connections_peak(workload, levels) + CONNECTION_MARGIN


class ConnectionsShort(ValueError):
    """The job's max_connections cannot hold its streams' connections; the message says both."""


@dataclass(frozen=True)
class ConnectionLimit:
    """max_connections for the servers. `raised_from` is the default the agent raised because
    the streams need more; None when the job set the value (it wins) or the default holds."""

    value: int
    raised_from: int | None = None


def max_connections_for(
    workload: Workload, levels: Sequence[int], requested: int | None
) -> ConnectionLimit:
    """max_connections for the server: what the job asked for, as it asked (an experiment about
    connection counts compares servers with the value it gives), else the default raised to
    what the streams need. ConnectionsShort when the job's value is below the streams' peak:
    their clients could never all connect."""
    if requested is not None:
        peak = connections_peak(workload, levels)
        if requested < peak:
            raise ConnectionsShort(
                f"max_connections = {requested} (the job's) is below the {peak} connections its "
                f"streams hold at their peak; give at least {peak + CONNECTION_MARGIN}, or leave "
                "it out for the agent to set"
            )
        return ConnectionLimit(requested)
    needed = connections_needed(workload, levels)
    if needed > DEFAULT_MAX_CONNECTIONS:
        return ConnectionLimit(needed, raised_from=DEFAULT_MAX_CONNECTIONS)
    return ConnectionLimit(DEFAULT_MAX_CONNECTIONS)


def nofile_needed(workload: Workload, levels: Sequence[int]) -> int:
    """Open files the agent and its pgbench children need: one per connection and pipe."""
    streams = workload_streams(workload)
    peak = max(
        sum(s.level_clients(level) + 2 * s.processes(level) for s in streams) for level in levels
    )
    return peak + FDS_BASE


def substitute(text: str, **values: int) -> str:
    """Replace `{name}` placeholders; other braces (plpgsql, format()) are left alone."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


# --- combining figures ------------------------------------------------------------------------


@dataclass
class StreamFigures:
    """What a stream's processes measured, summed or pooled across them."""

    stream: Stream
    clients: int
    threads: int | None
    outputs: list[dict[str, Any]] = field(default_factory=list)  # parsed, one per process
    raw: list[str] = field(default_factory=list)
    established: int | None = None
    problems: list[str] = field(default_factory=list)  # e.g. the background died early

    @property
    def aborted(self) -> bool:
        if self.problems:
            return True
        return self.stream.measured and any(o.get("aborted") for o in self.outputs)

    def tps(self) -> float | None:
        return _sum_float(o.get("tps") for o in self.outputs)

    def transactions(self) -> int | None:
        return _sum_int(o.get("transactions") for o in self.outputs)

    def failed(self) -> int | None:
        return _sum_int(o.get("failed_transactions") for o in self.outputs)

    def latency(self) -> tuple[float | None, float | None]:
        return pooled_latency(self.outputs)

    def to_payload(self) -> dict[str, Any]:
        """The stream's entry in the result upload (docs/runner-api.md)."""
        measured = self.stream.measured
        tps = self.tps() if measured and not self.aborted else None
        latency, stddev = self.latency() if measured else (None, None)
        rows = self.stream.rows_per_transaction
        errors = [*self.problems]
        for output in self.outputs:
            errors.extend(str(e) for e in output.get("errors", []) if measured)
        return {
            "name": self.stream.name,
            "role": self.stream.role,
            "processes": max(1, len(self.outputs)),
            "clients": self.clients,
            "threads": self.threads,
            "tps": tps,
            "transactions": self.transactions() if measured else None,
            "failed_transactions": self.failed() if measured else None,
            "latency_avg_ms": latency,
            "latency_stddev_ms": stddev,
            "rows_per_transaction": rows,
            "rows_per_s": tps * rows if tps is not None and rows else None,
            "established": self.established,
            "aborted": self.aborted,
            "errors": errors[:1000],
            "raw_output": "".join(self.raw)[-5_000_000:],
        }


def _sum_float(values: Iterable[float | None]) -> float | None:
    """The sum, or None when there is nothing or a value is missing (a figure pgbench lacked)."""
    numbers = list(values)
    if not numbers or any(v is None for v in numbers):
        return None
    return float(sum(v for v in numbers if v is not None))


def _sum_int(values: Iterable[int | None]) -> int | None:
    numbers = list(values)
    if not numbers or any(v is None for v in numbers):
        return None
    return sum(v for v in numbers if v is not None)


def pooled_latency(outputs: list[dict[str, Any]]) -> tuple[float | None, float | None]:
    """Mean latency over all transactions of several processes, and the pooled stddev (ms).

    Each process's mean is weighted by its transactions; the pooled variance adds each process's
    spread around the overall mean, so one slow process shows in the stddev.
    """
    if len(outputs) == 1:
        return outputs[0].get("latency_avg_ms"), outputs[0].get("latency_stddev_ms")
    parts: list[tuple[float, float, float | None]] = []
    for output in outputs:
        count, latency = output.get("transactions"), output.get("latency_avg_ms")
        if count is None or latency is None:
            return None, None
        parts.append((count, latency, output.get("latency_stddev_ms")))
    total = sum(n for n, _, _ in parts)
    if total == 0:
        return None, None
    mean = sum(n * m for n, m, _ in parts) / total
    spreads = [(n, m, s) for n, m, s in parts if s is not None]
    if len(spreads) < len(parts):
        return mean, None
    variance = sum(n * (s * s + (m - mean) ** 2) for n, m, s in spreads) / total
    return mean, math.sqrt(variance)


def combined_progress(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-interval progress over several processes: tps summed, latency weighted by tps.

    Only the intervals every process reported are kept, so a sum never lacks a process.
    """
    if len(outputs) == 1:
        return list(outputs[0].get("progress", []))
    by_t: dict[float, list[dict[str, Any]]] = {}
    for output in outputs:
        for line in output.get("progress", []):
            if line.get("t") is not None:
                by_t.setdefault(line["t"], []).append(line)
    samples = []
    for t in sorted(by_t):
        lines = by_t[t]
        if len(lines) != len(outputs) or any(p.get("tps") is None for p in lines):
            continue
        tps = sum(p["tps"] for p in lines)
        weighted = [(p["tps"], p.get("latency_ms")) for p in lines]
        latency = (
            sum(w * lat for w, lat in weighted) / tps
            if tps > 0 and all(lat is not None for _, lat in weighted)
            else None
        )
        samples.append({"t": t, "tps": tps, "latency_ms": latency})
    return samples


def level_figures(streams: list[StreamFigures], *, combine: str) -> dict[str, Any]:
    """The level's own figures (a parsed-output-like dict) from its streams' figures."""
    measured = [s for s in streams if s.stream.measured]
    outputs = [o for s in measured for o in s.outputs]
    problems = [p for s in streams for p in s.problems]
    errors = [*problems, *(str(e) for o in outputs for e in o.get("errors", []))]
    aborted = bool(problems) or any(o.get("aborted") for o in outputs)
    tps = measured[0].tps() if combine == "measured" else _sum_float(s.tps() for s in measured)
    latency, stddev = pooled_latency(outputs) if outputs else (None, None)
    single = outputs[0] if len(outputs) == 1 else {}
    return {
        "tps": tps,
        "tps_including_connections": single.get("tps_including_connections"),
        "initial_connection_time_ms": single.get("initial_connection_time_ms"),
        "transactions": _sum_int(o.get("transactions") for o in outputs),
        "failed_transactions": _sum_int(o.get("failed_transactions") for o in outputs),
        "skipped_transactions": single.get("skipped_transactions"),
        "retried_transactions": single.get("retried_transactions"),
        "latency_avg_ms": latency,
        "latency_stddev_ms": stddev,
        "threads": single.get("threads"),
        "aborted": aborted,
        "errors": errors,
        "progress": combined_progress(outputs) if outputs else [],
        # With several processes, the statement latencies of the first are representative
        # (they run the same scripts); every process's own output is in its stream's raw output.
        "statements": outputs[0].get("statements", []) if outputs else [],
    }
