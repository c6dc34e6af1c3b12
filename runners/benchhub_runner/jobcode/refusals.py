"""What the job-code checker refuses, one Refusal each, and the error of a job refused."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """One thing the checker refuses: `field` is its path in the job, `line` 1-based in that
    text (0 when the field is not text with lines, e.g. a setting name)."""

    field: str
    line: int
    reason: str

    @property
    def message(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class JobCodeRefused(Exception):
    """A job the agent will not run; the message lists every refusal."""

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        self.refusals = list(refusals)
        super().__init__(refusals_text(self.refusals))


def refusals_text(refusals: Iterable[Refusal]) -> str:
    return "; ".join(str(refusal) for refusal in refusals)
