"""Types that the selectors of compare/ and the modules that describe, assess and present a
comparison share: here, below both, so that neither side imports the other for them."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchhub.results.models import LevelAggregate, Run


@dataclass
class Series:
    """One compared version (or run): its run, its aggregates by client count, its threads."""

    label: str
    run: Run
    levels: dict[int, LevelAggregate]
    threads: list[int]
    # The set of runs everything shown for the version is made of: `run` first, then the other
    # runs of its build under its comparability key (on its host, unless same_hardware), newest
    # first.
    pooled: list[Run] = field(default_factory=list)
    # Client levels at which a repeat of the set was flagged client-bound (pgbench itself the
    # bottleneck): there a verdict measures the client, not the server.
    client_bound: set[int] = field(default_factory=set)
    # Client levels at which a repeat of the set moved inside its run (a trend or a level shift)
    # and nobody explained it: there no verdict is called (compare.assessment).
    unsteady: set[int] = field(default_factory=set)

    @property
    def is_summary(self) -> bool:
        return self.run.source == Run.Source.SUMMARY
