"""A labelled corpus of pgbench-like history: series of one value per run, each change of level
in them labelled (where, how much, what kind), for measuring how well detection finds the
changes and only them (regressions.quality). Pure code, no Django.

The corpus is generated with a fixed seed by `python -m benchhub.regressions.corpus.generate`
and checked in as `history.json` beside this module (docs/statistics.md, "Detection quality on
labelled history", says how it is made).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

PATH = Path(__file__).with_name("history.json")


@dataclass(frozen=True)
class Label:
    """A labelled change: `index` is that of the first run after it (for a drift, of the first
    run that drifted); `magnitude` the relative change of the level (-0.05: 5% lower; for a
    drift, over the rest of the series). `kind`: `step` (a change of the software: an alert
    should follow), `host` (the host changed under the series, which BenchHub records as a
    split: no alert), `drift` (a slow loss, not a step)."""

    index: int
    magnitude: float
    kind: str


@dataclass(frozen=True)
class Series:
    """One series: its values (tps, oldest first, one per run, a run a day), its relative
    run-to-run noise (the sd of log tps it was drawn with; of a bimodal series, the mixture's),
    its splits (indexes of the first run after a host change), its labelled changes, its single
    low outliers (checkpoint dips: no change) and what shapes it (`bimodal`, `dips`, ...)."""

    name: str
    noise: float
    values: list[float]
    splits: list[int] = field(default_factory=list)
    changes: list[Label] = field(default_factory=list)
    outliers: list[int] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)

    @property
    def drifting(self) -> bool:
        return any(label.kind == "drift" for label in self.changes)


def corpus_dump(series: list[Series]) -> str:
    """The corpus as its file holds it: one series a line, so that a change reads as a diff."""
    lines = [
        json.dumps(
            {
                "name": s.name,
                "noise": s.noise,
                "shapes": s.shapes,
                "splits": s.splits,
                "changes": [vars(label) for label in s.changes],
                "outliers": s.outliers,
                "values": s.values,
            },
            separators=(",", ":"),
        )
        for s in series
    ]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def corpus_parse(text: str) -> list[Series]:
    return [
        Series(
            name=row["name"],
            noise=row["noise"],
            values=row["values"],
            splits=row["splits"],
            changes=[Label(**label) for label in row["changes"]],
            outliers=row["outliers"],
            shapes=row["shapes"],
        )
        for row in json.loads(text)
    ]


def corpus_load(path: Path = PATH) -> list[Series]:
    """The checked-in corpus."""
    return corpus_parse(path.read_text())
