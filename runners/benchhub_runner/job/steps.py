"""The measurements of a job, one Step each, in the order they run."""

from __future__ import annotations

from dataclasses import dataclass

from ..jobspec.spec import JobSpec
from ..measure.order import level_sequence


@dataclass(frozen=True)
class Step:
    version: str
    clients: int
    repeat: int
    # The version's place in the job: an A/A job names one version twice, two separate series.
    series: int = 0

    @property
    def stage(self) -> str:
        return f"level c={self.clients} repeat={self.repeat} version={self.version}"


def plan(job: JobSpec) -> list[Step]:
    """Every measurement of the job, in the order it runs."""
    levels = level_sequence(job)
    series = list(enumerate(job.versions))
    if job.order == "sequential":
        return [Step(v, c, r, i) for i, v in series for c, r in levels]
    return [Step(v, c, r, i) for c, r in levels for i, v in series]
