"""What explains one client level of a run: its repeats' evidence and OS telemetry, summarized.

Pure code over rows already read (the run page and a comparison's why section read them in a
fixed number of queries). Per-transaction figures divide a repeat's server statistics deltas
by the transactions pgbench counted in that repeat's measurement; the level's figure is the
median over its repeats. Wait event shares pool the repeats' samples (weighted by the active
backends each saw). Latency percentiles are the median over repeats of each repeat's
percentile; the histogram and the profile are those of one repeat, named.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchhub.results.models import Result, ResultEvidence

PERCENTILES = ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")
CPU_FIELDS = ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_steal_pct", "cpu_idle_pct")
TOP_STATEMENTS = 10


@dataclass
class Statement:
    query: str
    calls: int
    total_ms: float

    @property
    def mean_ms(self) -> float | None:
        return self.total_ms / self.calls if self.calls else None


@dataclass
class LevelEvidence:
    """One level of one run. Every figure is None when no repeat gave it.

    Per transaction: `wal_bytes`, `blocks_read`, `blocks_hit` (8 kB blocks), `context_switches`
    (the host's, over the measurement). `checkpoints` lists the checkpoints each repeat saw.
    `waits` maps "<type>:<event>" or "CPU" to the share of sampled active backends (sums to 1),
    `wait_samples` counts those backend samples. `latency` holds the percentiles in ms. `cpu`
    the host's CPU split in % (user, system, iowait, steal, idle), `client_cpu_pct` the pgbench
    client's CPU in % of one core, `client_bound` whether any repeat was flagged client-bound.
    """

    clients: int
    repeats: list[int] = field(default_factory=list)
    evidence_repeats: list[int] = field(default_factory=list)
    wal_bytes: float | None = None
    blocks_read: float | None = None
    blocks_hit: float | None = None
    checkpoints: list[int] = field(default_factory=list)
    waits: dict[str, float] = field(default_factory=dict)
    wait_samples: int = 0
    wait_interval_ms: float | None = None
    latency: dict[str, float] = field(default_factory=dict)
    latency_transactions: int = 0
    sampling_rate: float | None = None
    histogram: dict[str, list[float]] | None = None
    histogram_repeat: int | None = None
    statements: list[Statement] = field(default_factory=list)
    profile: dict[str, Any] | None = None
    profile_repeat: int | None = None
    unavailable: dict[str, str] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    context_switches: float | None = None
    client_cpu_pct: float | None = None
    client_bound: bool | None = None

    @property
    def has_evidence(self) -> bool:
        return bool(self.evidence_repeats)


def median_of(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.median(kept)) if kept else None


def _per_transaction(value: Any, transactions: int | None) -> float | None:
    if value is None or not transactions:
        return None
    return float(value) / transactions


def _transactions(result: Result, evidence: ResultEvidence) -> int | None:
    """pgbench's count of the measurement; else the database's commits over it."""
    if result.transactions:
        return result.transactions
    database = (evidence.stats or {}).get("database") or {}
    return database.get("xact_commit") or None


def _waits(level: LevelEvidence, rows: Sequence[ResultEvidence]) -> None:
    weighted: dict[str, float] = {}
    total = 0
    for evidence in rows:
        waits = evidence.waits or {}
        events = waits.get("events") or {}
        weight = waits.get("backend_samples") or 0
        if not events or not weight:
            continue
        total += weight
        level.wait_interval_ms = waits.get("interval_ms", level.wait_interval_ms)
        for name, share in events.items():
            weighted[name] = weighted.get(name, 0.0) + share * weight
    if total:
        level.wait_samples = total
        ordered = sorted(weighted.items(), key=lambda item: -item[1])
        level.waits = {name: value / total for name, value in ordered}


def _latency(level: LevelEvidence, rows: Sequence[tuple[Result, ResultEvidence]]) -> None:
    given = [(r, e.latency) for r, e in rows if e.latency]
    for key in PERCENTILES:
        value = median_of(latency.get(key) for _, latency in given)
        if value is not None:
            level.latency[key] = value
    level.latency_transactions = sum(latency.get("transactions") or 0 for _, latency in given)
    level.sampling_rate = next((lat.get("sampling_rate") for _, lat in given), None)
    for result, latency in given:
        if latency.get("histogram"):
            level.histogram, level.histogram_repeat = latency["histogram"], result.repeat
            break


def _statements(rows: Sequence[ResultEvidence]) -> list[Statement]:
    """The repeats' top statements merged by query text, by total time."""
    merged: dict[str, Statement] = {}
    for evidence in rows:
        for item in evidence.statements or []:
            statement = merged.setdefault(item["query"], Statement(item["query"], 0, 0.0))
            statement.calls += item.get("calls") or 0
            statement.total_ms += item.get("total_ms") or 0.0
    return sorted(merged.values(), key=lambda s: -s.total_ms)[:TOP_STATEMENTS]


def _telemetry(level: LevelEvidence, results: Sequence[Result]) -> None:
    switches, client = [], []
    splits: dict[str, list[float]] = {name: [] for name in CPU_FIELDS}
    for result in results:
        samples = result.telemetry
        for name in CPU_FIELDS:
            values = [s[name] for s in samples if s.get(name) is not None]
            if values:
                splits[name].append(float(np.mean(values)))
        per_s = [
            s["ctx_switches_per_s"] for s in samples if s.get("ctx_switches_per_s") is not None
        ]
        if per_s and result.tps:
            switches.append(float(np.mean(per_s)) / result.tps)
        cpu = [s["client_cpu_pct"] for s in samples if s.get("client_cpu_pct") is not None]
        if cpu:
            client.append(float(np.mean(cpu)))
    level.cpu = {name: float(np.median(v)) for name, v in splits.items() if v}
    level.context_switches = median_of(switches)
    level.client_cpu_pct = median_of(client)
    flags = [r.client_bound for r in results if r.client_bound is not None]
    level.client_bound = any(flags) if flags else None


def level_evidence(
    *, clients: int, results: Sequence[Result], evidence: dict[int, ResultEvidence]
) -> LevelEvidence:
    """The evidence of one level from its results (aborted ones left out, their OS telemetry
    joined: select_related("os_telemetry")) and their evidence rows by result id
    (ResultEvidence.result_id)."""
    valid = [r for r in results if not r.aborted]
    level = LevelEvidence(clients=clients, repeats=[r.repeat for r in valid])
    rows = [(r, evidence[r.pk]) for r in valid if r.pk in evidence]
    level.evidence_repeats = [r.repeat for r, _ in rows]
    _telemetry(level, valid)
    if not rows:
        return level
    stats = [(_transactions(r, e), (e.stats or {})) for r, e in rows]
    level.wal_bytes = median_of(_per_transaction(s.get("wal_bytes"), n) for n, s in stats)
    for name, column in (("blocks_read", "blks_read"), ("blocks_hit", "blks_hit")):
        values = (_per_transaction((s.get("database") or {}).get(column), n) for n, s in stats)
        setattr(level, name, median_of(values))
    level.checkpoints = [s["checkpoints"] for _, s in stats if s.get("checkpoints") is not None]
    _waits(level, [e for _, e in rows])
    _latency(level, rows)
    level.statements = _statements([e for _, e in rows])
    for result, row in rows:
        if row.profile and row.profile.get("folded"):
            level.profile, level.profile_repeat = row.profile, result.repeat
            break
    for _, row in rows:
        level.unavailable.update(row.unavailable or {})
    return level
