"""Each experiment's results the way its authors presented them (Workload.presentation).

Every builder takes comparisons already read (selectors.comparison_get for one workload,
experiments.experiment_get for several) and what selectors.presentation_read (and, for the
progress charts, selectors.progress_read) read for them, and makes no query. Columns follow the
versions: `labels` lists them, the first is the baseline ("old"); a workload without a run of a
version has None in that column.

Figures are medians over the valid repeats of a level: aborted results (and aborted streams)
never count, and runs marked invalid were left out by the comparison's selector.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from benchhub.compare.presentations.common import (
    EVIDENCE_PARAMS,
    MAX_PROGRESS_POINTS,
    MAX_STREAM_ROWS,
    by_label,
    median,
    run_ids,
    version_labels,
)
from benchhub.compare.presentations.connections import (
    ClientLimits,
    ConnectionsCell,
    ConnectionsRow,
    ConnectionsTable,
    Progress,
    ProgressLine,
    connections_table,
    progress_lines,
)
from benchhub.compare.presentations.evidence import (
    EvidenceCell,
    EvidenceRow,
    EvidenceTable,
    evidence_params,
    evidence_table,
)
from benchhub.compare.presentations.improvement import (
    Improvement,
    ImprovementRow,
    ImprovementTable,
    improvement_table,
)
from benchhub.compare.presentations.streams import StreamCell, StreamRow, StreamTable, stream_table
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import PresentationRead, presentation_of
from benchhub.workloads.models import Workload

__all__ = [
    "EVIDENCE_PARAMS",
    "MAX_PROGRESS_POINTS",
    "MAX_STREAM_ROWS",
    "ClientLimits",
    "ConnectionsCell",
    "ConnectionsRow",
    "ConnectionsTable",
    "EvidenceCell",
    "EvidenceRow",
    "EvidenceTable",
    "Improvement",
    "ImprovementRow",
    "ImprovementTable",
    "Progress",
    "ProgressLine",
    "StreamCell",
    "StreamRow",
    "StreamTable",
    "by_label",
    "connections_table",
    "evidence_params",
    "evidence_table",
    "improvement_table",
    "median",
    "presentation_of",
    "presentation_tables",
    "progress_lines",
    "run_ids",
    "stream_table",
    "tables_data",
    "version_labels",
]


def tables_data(tables: dict[str, Any]) -> dict[str, Any]:
    """Tables built by presentation_tables as JSON-ready data (the compare API's
    "presentation" key)."""
    return {
        name: value if isinstance(value, str) else asdict(value) for name, value in tables.items()
    }


def presentation_tables(comparisons: list[Comparison], read: PresentationRead) -> dict[str, Any]:
    """The tables of the comparisons' presentation (none for a sweep): {"presentation": ...,
    "improvement" | "streams" | "connections" | "evidence": table}, from `read`
    (selectors.presentation_read of the same comparisons)."""
    comparisons = [c for c in comparisons if c.series]
    kind = read.kind
    builders: dict[str, tuple[str, Callable[[list[Comparison]], Any]]] = {
        Workload.Presentation.IMPROVEMENT: (
            "improvement",
            lambda c: improvement_table(c, read.threads),
        ),
        Workload.Presentation.STREAMS: ("streams", lambda c: stream_table(c, read.streams)),
        Workload.Presentation.CONNECTIONS: (
            "connections",
            lambda c: connections_table(c, read.streams),
        ),
        Workload.Presentation.EVIDENCE: ("evidence", lambda c: evidence_table(c, read.telemetry)),
    }
    tables: dict[str, Any] = {"presentation": kind}
    if kind in builders and comparisons:
        name, build = builders[kind]
        tables[name] = build(comparisons)
    return tables
