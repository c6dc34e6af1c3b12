"""The improvement table (E5): connections, threads, tps old, tps new, improvement %."""

from __future__ import annotations

from dataclasses import dataclass

from benchhub.compare.experiments import model_name
from benchhub.compare.presentations.common import (
    by_label,
    level_tps,
    version_labels,
)
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import LevelThreads
from benchhub.stats.figures import change_pct


@dataclass
class Improvement:
    """A version other than the baseline at one level: its median tps and change in percent."""

    tps: float | None
    improvement_pct: float | None


@dataclass
class ImprovementRow:
    model: str
    workload: str
    connections: int
    threads: str
    old: float | None
    new: list[Improvement]


@dataclass
class ImprovementTable:
    old: str
    new: list[str]
    rows: list[ImprovementRow]


def improvement_table(
    comparisons: list[Comparison], threads: LevelThreads
) -> ImprovementTable | None:
    """model | connections | threads | tps old | tps new | improvement %, one row per workload
    and client level, from the LevelAggregate medians; threads as pgbench ran them (Result
    threads of the valid results, "a / b" when versions ran the level with different threads).
    `threads` is selectors.level_threads of the compared runs."""
    labels = version_labels(comparisons)
    if not labels:
        return None
    rows = []
    for comparison in comparisons:
        columns = by_label(comparison, labels)
        workload = comparison.series[0].run.workload
        for clients in comparison.clients:
            medians = [level_tps(s, clients) for s in columns]
            used = sorted({t for s in columns if s for t in threads.get((s.run.id, clients), ())})
            rows.append(
                ImprovementRow(
                    model=model_name(workload),
                    workload=workload.name,
                    connections=clients,
                    threads=" / ".join(map(str, used)) or "unknown",
                    old=medians[0],
                    new=[
                        Improvement(tps=m, improvement_pct=change_pct(medians[0], m))
                        for m in medians[1:]
                    ],
                )
            )
    return ImprovementTable(old=labels[0], new=labels[1:], rows=rows)
