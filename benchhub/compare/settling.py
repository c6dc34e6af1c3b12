"""What would settle a level left inconclusive: the change to make (more repeats, more jobs,
longer levels, a quieter host) and how long it would take on this host, in words for the page
and the API. Presentation code over the verdicts (stats.verdicts) and the compared runs; no
query: it reads fields the comparison has already loaded.

The time is an estimate at the pace the compared job kept: its wall time (from its first
version's set-up to its upload) over the measurements it made, so each measurement carries its
warm-up, its server switch and its share of the job's initdb, load and extra passes. A busy
host's pace is slow, and so is the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchhub.compare.verdict_text import percent, signed_percent
from benchhub.results.models import Run
from benchhub.stats.noise import MAX_REPEATS, repeats_needed
from benchhub.stats.verdicts import LevelVerdict, Verdict

# With one run a side, repeats cannot show the variation between runs; only runs of separate
# jobs can. Two more jobs make three runs a side: run means with 4 degrees of freedom, the
# fewest whose t quantile (2.78) no longer swamps the difference (4.30 at 2). "Settle it"
# (assessment.settle_plan) queues this many.
SETTLE_JOBS = 2
# A level whose repeats' own seconds make at least this share of the run-to-run variation
# gains from longer levels: their per-second noise falls with the square root of the length.
LONGER_SHARE = 0.5
# Without a variation to go on (one repeat a side, no history), the fewest repeats that give one
# with a t quantile that does not swamp the difference.
FIRST_REPEATS = 3


def measurement_seconds(runs: Sequence[Run]) -> float | None:
    """Seconds one measurement (one version, level and repeat) took in the job of the first of
    `runs`, counting the other `runs` of that job: None when the job's times are unknown."""
    if not runs:
        return None
    first = runs[0]
    job_runs = [r for r in runs if r.job_id == first.job_id] if first.job_id else [first]
    starts = [r.started_at for r in job_runs if r.started_at]
    ends = [r.finished_at for r in job_runs if r.finished_at]
    steps = sum(len(r.level_sequence or ()) or len(r.clients or ()) * r.repeats for r in job_runs)
    if not starts or not ends or not steps:
        return None
    wall = (max(ends) - min(starts)).total_seconds()
    return wall / steps if wall > 0 else None


def duration_text(seconds: float) -> str:
    """40 -> "about 40 s", 150 -> "about 3 min"."""
    if seconds < 90:
        return f"about {max(5, round(seconds / 5) * 5)} s"
    return f"about {math.ceil(seconds / 60)} min"


def settle_text(level: LevelVerdict, *, pace: float | None, versions: int = 2) -> str:
    """The change that would likely (4 times in 5) settle a level inconclusive after Holm (its
    own verdict may be decided: then the change that would hold it among the curve's levels),
    with its estimated time at `pace` seconds a measurement over `versions` versions."""
    if level.verdict is not Verdict.INCONCLUSIVE:
        return _after_holm(level, pace=pace, versions=versions)
    if level.tps.cv is None:
        more = FIRST_REPEATS - min(level.repeats)
        return f"{FIRST_REPEATS} repeats a side ({more} more){_time(more * versions, pace)}."
    if level.tps.one_job:
        return _more_jobs(level, pace=pace, versions=versions)
    return _more_repeats(level, pace=pace, versions=versions)


def _after_holm(level: LevelVerdict, *, pace: float | None, versions: int) -> str:
    """A level decided on its own but not after Holm's correction over the curve."""
    if level.tps.cv is None:
        return ""
    needed = _needed(level)
    if needed is None or level.tps.one_job:
        return _more_jobs(level, pace=pace, versions=versions)
    have = min(level.repeats)
    more = max(1, needed - have)
    return (
        f"{have + more} repeats a side ({more} more), to hold among the curve's levels"
        f"{_time(more * versions, pace)}."
    )


def _more_jobs(level: LevelVerdict, *, pace: float | None, versions: int) -> str:
    """One run a side: only separate jobs show the variation between runs ("settle it")."""
    repeats = min(level.repeats)
    steps = SETTLE_JOBS * repeats * versions
    text = (
        f"Settle it: {SETTLE_JOBS} more jobs of {repeats} repeats a side, each a run of its own"
        f"{_time(steps, pace)}"
    )
    needed = _needed(level)
    if needed is None:
        text += f"; inside one job, more than {MAX_REPEATS} repeats a side would be needed"
    elif needed > repeats:
        more = needed - repeats
        paired = ", compared pair by pair" if level.tps.paired else ""
        text += (
            f"; or, inside one job, {needed} repeats a side ({more} more){paired}"
            f"{_time(more * versions, pace)}, which sees only that job's variation"
        )
    return text + "." + _host_text(level)


def _more_repeats(level: LevelVerdict, *, pace: float | None, versions: int) -> str:
    needed = _needed(level)
    if needed is None:
        return (
            "More repeats would not settle it soon: the change "
            f"({signed_percent(level.tps.value)}) sits at the \u00b1{percent(level.threshold)} "
            "threshold." + _longer_text(level) + _host_text(level)
        )
    more = max(1, needed - min(level.repeats))
    return f"{needed} repeats a side ({more} more){_time(more * versions, pace)}." + _longer_text(
        level
    )


def _needed(level: LevelVerdict) -> int | None:
    """Repeats a side likely to settle the level as observed (the verdict's own estimate, else
    computed here for a level that is open only after Holm)."""
    if level.repeats_needed is not None:
        return level.repeats_needed
    if level.tps.cv is None:
        return None
    return repeats_needed(
        log_ratio=level.tps.log_value,
        cv=level.tps.cv,
        threshold=level.threshold,
        limit=MAX_REPEATS,
        paired=level.tps.paired,
    )


def _longer_text(level: LevelVerdict) -> str:
    tps = level.tps
    if not tps.cv or tps.within_cv < LONGER_SHARE * tps.cv:
        return ""
    return (
        f" Longer levels would help too: each repeat's own seconds make {percent(tps.within_cv)}"
        f" of the {percent(tps.cv)} variation, and that part falls with the square root of the"
        " length."
    )


def _host_text(level: LevelVerdict) -> str:
    if level.tps.cv is None or level.tps.cv < level.threshold:
        return ""
    return (
        f" The run-to-run variation ({percent(level.tps.cv)}) exceeds the "
        f"\u00b1{percent(level.threshold)} threshold: on a quieter host (no other work beside "
        "the agent) each of these would need fewer repeats."
    )


def _time(steps: int, pace: float | None) -> str:
    if pace is None:
        return ""
    return f", {duration_text(steps * pace)} at this job's pace"
