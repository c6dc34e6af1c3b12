"""How well detection finds the labelled changes of the corpus (regressions.corpus), and only
them: precision, recall and F1 per detector, and of the alerts as BenchHub stores them. Pure
code, no Django.

    .venv/bin/python -m benchhub.regressions.quality            # the table of docs/statistics.md
    .venv/bin/python -m benchhub.regressions.quality --write    # and record it (quality.json)
    .venv/bin/python -m benchhub.regressions.quality --as-uploaded --product --write
                                                   # and record the CI sample's (UPLOADED)
    .venv/bin/python -m benchhub.regressions.quality --as-uploaded   # the alerts sent as runs
                                                                     # arrive (minutes)
    .venv/bin/python -m benchhub.regressions.quality --as-uploaded --product --confirm 0 1 2 3 5
                                                   # sent after N detections, with and without
                                                   # the windowed test

Two measures per detector:

- **Change points**: the detector over each whole series (no splits). The truth is every
  labelled change of level, steps and host changes alike (a host change is a real change of
  level; telling it from a regression is the alerts' business).
- **Alerts**: what BenchHub stores and notifies, one Regression or Improvement per change
  (detection.series_changes: each segment between the series' splits on its own). The truth is
  the labelled steps; a change stored at a host change, a dip or anywhere else is a false alert.
  `false_alert_share` is the share of stored changes that are false (1 - precision);
  `missed_regressions` the share of the detectable steps down (DETECTABLE) that got no alert.

On this corpus an alert group (regressions.grouping: one host, one commit range, across levels
and workloads) holds one alert: each series is alone on its host, and its steps are 20 runs or
more apart. So the alerts' figures are the groups' figures here.

A found change matches a labelled one within TOLERANCE runs, in the same direction, each label
matched once. Drifting series are left out of both (a slow loss is no step; the drift detector
of stats.drift is scored on them instead: drift_quality).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchhub.regressions.corpus import Label, Series, corpus_load
from benchhub.regressions.detection import (
    CONFIRM,
    MOVE_RUNS,
    WINDOW_P,
    Detector,
    default_detector,
    series_changes,
)
from benchhub.stats.changepoints import (
    MAX_P,
    MIN_CHANGE_NOISES,
    MIN_RUNS,
    ChangePoint,
    change_points,
    window_p_value,
)
from benchhub.stats.drift import drift

TOLERANCE = 3
NEAR = 10
# A step an alert must follow: at least 3% and at least 3 times the series' run-to-run noise.
DETECTABLE = 0.03
DETECTABLE_NOISES = 3.0
RECORDED = Path(__file__).with_name("corpus") / "quality.json"
# How far a measurement may fall below the recorded one before the check fails: the corpus is
# fixed and the detectors deterministic, so only a change of the code or a library moves it.
SLACK = 0.02


@dataclass
class Counts:
    hits: int = 0
    misses: int = 0
    false: int = 0

    @property
    def precision(self) -> float:
        found = self.hits + self.false
        return self.hits / found if found else 1.0

    @property
    def recall(self) -> float:
        labelled = self.hits + self.misses
        return self.hits / labelled if labelled else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class Quality:
    """One detector's figures on the corpus; `by_step` is the alerts' recall per step size."""

    points: Counts = field(default_factory=Counts)
    alerts: Counts = field(default_factory=Counts)
    regressions: Counts = field(default_factory=Counts)  # detectable steps down only
    by_step: dict[str, Counts] = field(default_factory=dict)
    # False alerts within NEAR runs of a labelled step in their direction: the right change
    # at the wrong run (the wrong first commit to bisect from), not a change that was not there.
    misplaced: int = 0

    @property
    def false_alert_share(self) -> float:
        return 1.0 - self.alerts.precision

    @property
    def missed_regressions(self) -> float:
        return 1.0 - self.regressions.recall

    def figures(self) -> dict[str, float]:
        return {
            "points_precision": round(self.points.precision, 4),
            "points_recall": round(self.points.recall, 4),
            "points_f1": round(self.points.f1, 4),
            "alerts_precision": round(self.alerts.precision, 4),
            "alerts_recall": round(self.alerts.recall, 4),
            "alerts_f1": round(self.alerts.f1, 4),
            "false_alert_share": round(self.false_alert_share, 4),
            "missed_regressions": round(self.missed_regressions, 4),
        }


def match(found: Sequence[tuple[int, float]], labels: Sequence[Label]) -> list[Label | None]:
    """For each found change (index, relative change), the label it matches, or None: the
    nearest label within TOLERANCE in the same direction not matched already."""
    taken: set[int] = set()
    matched: list[Label | None] = []
    for index, change in found:
        near = [
            (abs(label.index - index), n)
            for n, label in enumerate(labels)
            if n not in taken
            and abs(label.index - index) <= TOLERANCE
            and (label.magnitude < 0) == (change < 0)
        ]
        if near:
            taken.add(min(near)[1])
            matched.append(labels[min(near)[1]])
        else:
            matched.append(None)
    return matched


def _count(into: Counts, found: Sequence[tuple[int, float]], labels: Sequence[Label]) -> None:
    matched = match(found, labels)
    into.false += sum(label is None for label in matched)
    into.hits += sum(label is not None for label in matched)
    into.misses += len(labels) - sum(label is not None for label in matched)


def detectable(label: Label, noise: float) -> bool:
    size = abs(label.magnitude)
    return label.kind == "step" and size >= DETECTABLE and size >= DETECTABLE_NOISES * noise


def uploaded_changes(series: Series, detect: Detector) -> list[tuple[int, float, int, int]]:
    """The changes stored over a series uploaded a run at a time, detection running after each
    upload on the runs so far (as regressions.services.run_detect does), as (first run after,
    relative change, detections that found it, those of them whose windowed test agreed): each
    stored once by its first run after, with the figures of the last detection that found it (a
    new change's figures are refined), moved when found again within MOVE_RUNS runs in the same
    direction (none is triaged here), and kept when later detections no longer find it. The
    segments' change points only: the intervals do not decide what is stored."""
    stored: dict[int, tuple[float, int, int]] = {}
    for count in range(2, len(series.values) + 1):
        bounds = [0, *(s for s in series.splits if s < count), count]
        for start, end in itertools.pairwise(bounds):
            segment = series.values[start:end]
            for point in detect(segment) if end > start else []:
                index = start + point.index
                agreed = window_p_value(segment, point.index) < WINDOW_P
                seen, agreeing = stored[index][1:] if index in stored else (0, 0)
                near = [
                    (abs(k - index), k)
                    for k, (was, _, _) in stored.items()
                    if abs(k - index) <= MOVE_RUNS and (was < 0) == (point.change < 0)
                ]
                if index not in stored and near:
                    seen, agreeing = stored.pop(min(near)[1])[1:]
                stored[index] = (point.change, seen + 1, agreeing + agreed)
    return sorted((k, *v) for k, v in stored.items())


@dataclass(frozen=True)
class Sent:
    """Which stored changes are sent: those found by `confirm` detections, counting only those
    whose windowed test agreed when `windowed` (as regressions.services sends them); with
    `confirm` 0, every change stored."""

    confirm: int = CONFIRM
    windowed: bool = True

    def picks(self, seen: int, agreeing: int) -> bool:
        if not self.confirm:
            return seen >= 1
        return (agreeing if self.windowed else seen) >= self.confirm

    @property
    def name(self) -> str:
        if not self.confirm:
            return "every change stored"
        found = f"{self.confirm} detection{'s' if self.confirm > 1 else ''}"
        windowed = "agreeing" if self.windowed else "ignored"
        return f"{found}, windowed test {windowed}"


def uploaded_alerts(
    series: Series, detect: Detector, *, sent: Sent = Sent()
) -> list[tuple[int, float]]:
    """Of uploaded_changes, those `sent` picks (by default, as BenchHub sends them)."""
    return [
        (index, change)
        for index, change, seen, agreeing in uploaded_changes(series, detect)
        if sent.picks(seen, agreeing)
    ]


def series_quality(
    series: Series,
    detect: Detector,
    into: Quality,
    *,
    alerts: Sequence[tuple[int, float]] | None = None,
) -> None:
    """Score `alerts` (index, relative change) of `series`, by default those of one detection
    over the whole series (detection.series_changes), into `into`."""
    as_uploaded = alerts is not None
    if alerts is None:
        alerts = [
            (c.index, c.change)
            for c in series_changes(values=series.values, splits=series.splits, detect=detect)
        ]
    # Without splits, detected once, the alerts are the whole series' change points: no second
    # detection.
    if series.splits or as_uploaded:
        points = [(p.index, p.change) for p in detect(series.values)]
    else:
        points = list(alerts)
    _count(into.points, points, series.changes)
    steps = [label for label in series.changes if label.kind == "step"]
    _count(into.alerts, alerts, steps)
    matches = match(alerts, steps)
    matched = {id(label) for label in matches if label is not None}
    into.misplaced += sum(
        label is None
        and any(abs(s.index - index) <= NEAR and (s.magnitude < 0) == (change < 0) for s in steps)
        for (index, change), label in zip(alerts, matches, strict=True)
    )
    for label in steps:
        key = f"{abs(label.magnitude):.0%}"
        if key in ("1%", "2%", "3%", "5%", "10%", "20%"):
            counts = into.by_step.setdefault(key, Counts())
            counts.hits += id(label) in matched
            counts.misses += id(label) not in matched
        if label.magnitude < 0 and detectable(label, series.noise):
            into.regressions.hits += id(label) in matched
            into.regressions.misses += id(label) not in matched


def quality(*, detect: Detector, corpus: Sequence[Series] | None = None) -> Quality:
    """The figures of `detect` over the corpus (the checked-in one unless given), the alerts
    those of one detection over each whole series."""
    made = Quality()
    for series in corpus if corpus is not None else corpus_load():
        if not series.drifting:
            series_quality(series, detect, made)
    return made


def uploaded_quality(
    *, detect: Detector, sent: Sequence[Sent], corpus: Sequence[Series] | None = None
) -> dict[Sent, Quality]:
    """The figures of `detect` over the corpus as uploaded (uploaded_changes: a detection per
    run, minutes for the corpus), for the alerts each of `sent` picks, from one pass."""
    made = {rule: Quality() for rule in sent}
    for series in corpus if corpus is not None else corpus_load():
        if not series.drifting:
            changes = uploaded_changes(series, detect)
            for rule, into in made.items():
                alerts = [(i, c) for i, c, seen, agreeing in changes if rule.picks(seen, agreeing)]
                series_quality(series, detect, into, alerts=alerts)
    return made


@dataclass
class DriftQuality:
    """The drift detector (stats.drift) over the newest segment of each series: drifting series
    flagged as losing, by loss a week and noise; the others flagged, by shape."""

    drifting: dict[tuple[float, float], Counts] = field(default_factory=dict)
    others: dict[str, Counts] = field(default_factory=dict)


def drift_quality(*, corpus: Sequence[Series] | None = None) -> DriftQuality:
    """A drifting series is a hit when flagged losing, a miss otherwise; any other series
    flagged is a false flag (counted in `others[shape].false`, `hits` counting the quiet)."""
    made = DriftQuality()
    for series in corpus if corpus is not None else corpus_load():
        found = drift(values=series.values[max([0, *series.splits]) :])
        losing = found is not None and found.per_week < 0
        if series.drifting:
            (label,) = series.changes
            weeks = (len(series.values) - 1 - label.index) / 7
            per_week = round(-math.expm1(math.log1p(label.magnitude) / weeks), 4)
            counts = made.drifting.setdefault((per_week, series.noise), Counts())
            counts.hits += losing
            counts.misses += not losing
        else:
            shape = "step" if "step" in series.shapes else series.shapes[-1]
            counts = made.others.setdefault(shape, Counts())
            counts.false += found is not None
            counts.hits += found is None
    return made


def drift_table(made: DriftQuality) -> str:
    noises = sorted({noise for _, noise in made.drifting})
    lines = [
        "| loss a week | " + " | ".join(f"noise {n:.0%}: flagged" for n in noises) + " |",
        "|---" * (1 + len(noises)) + "|",
    ]
    for per_week in sorted({w for w, _ in made.drifting}):
        cells = [made.drifting[(per_week, n)] for n in noises]
        lines.append(
            f"| {per_week:.2%} | "
            + " | ".join(f"{c.hits} of {c.hits + c.misses}" for c in cells)
            + " |"
        )
    flags = ", ".join(
        f"{shape} {c.false} of {c.false + c.hits}" for shape, c in sorted(made.others.items())
    )
    return "\n".join(lines) + f"\n\nOther series flagged: {flags}."


def otava(max_p: float) -> Detector:
    """Otava as it comes, at `max_p`."""

    def detect(values: Sequence[float]) -> list[ChangePoint]:
        return change_points(
            values=values, max_p=max_p, min_runs=1, min_change=0.0, outlier_noises=0.0
        )

    return detect


PRODUCT = (
    f"BenchHub: Otava, p < {MAX_P:g}, levels of {MIN_RUNS}+ runs, "
    f"changes of {MIN_CHANGE_NOISES:g}x the noise"
)
DETECTORS: dict[str, Detector] = {
    PRODUCT: default_detector,
    "BenchHub before: Otava, p < 0.0001": otava(1e-4),
    "Otava default (p < 0.001)": otava(1e-3),
}


# The alerts sent as uploaded are checked in CI on every SAMPLE_EVERYth series of the corpus (a
# detection per run over the whole corpus takes minutes).
SAMPLE_EVERY = 8
UPLOADED = (
    f"{PRODUCT}; as uploaded, every {SAMPLE_EVERY}th series, sent after {CONFIRM} detections "
    f"with the windowed test agreeing (p < {WINDOW_P:g})"
)


def uploaded_sample(corpus: Sequence[Series]) -> list[Series]:
    return list(corpus[::SAMPLE_EVERY])


def quality_check(
    measured: Quality, recorded: dict[str, float], *, slack: float = SLACK
) -> list[str]:
    """What fell below the recorded figures by more than `slack` (rates that should be low,
    false alerts and missed regressions, rose by more): empty when nothing did."""
    failures = []
    for name, value in measured.figures().items():
        was = recorded[name]
        worse = value > was + slack if name in LOWER_IS_BETTER else value < was - slack
        if worse:
            failures.append(f"{name}: {value:.3f}, recorded {was:.3f}")
    return failures


LOWER_IS_BETTER = ("false_alert_share", "missed_regressions")


def recorded_figures(path: Path = RECORDED) -> dict[str, dict[str, float]]:
    return json.loads(path.read_text())


def table(results: dict[str, Quality], *, points: bool = True) -> str:
    """The markdown table of docs/statistics.md; without the change points' column when not
    `points` (the alerts as uploaded: the change points are those of the first table)."""
    steps = ("1%", "2%", "3%", "5%", "10%", "20%")
    lines = [
        "| detector | change points: P / R / F1 | alerts: P / R / F1 | false alerts "
        f"(of them {TOLERANCE + 1} to {NEAR} runs from a step) | "
        "missed regressions (detectable) | alerts' recall by step: " + " / ".join(steps) + " |",
        "|---|---|---|---|---|---|",
    ]
    for name, q in results.items():
        pts, alr = q.points, q.alerts
        recall = " / ".join(f"{q.by_step[s].recall:.2f}" for s in steps if s in q.by_step)
        lines.append(
            f"| {name} | {pts.precision:.3f} / {pts.recall:.3f} / {pts.f1:.3f} "
            f"| {alr.precision:.3f} / {alr.recall:.3f} / {alr.f1:.3f} "
            f"| {q.false_alert_share:.1%} ({alr.false} of {alr.hits + alr.false}; "
            f"{q.misplaced}) "
            f"| {q.missed_regressions:.1%} ({q.regressions.misses} of "
            f"{q.regressions.hits + q.regressions.misses}) | {recall} |"
        )
    if not points:
        lines = ["|".join(cells[:2] + cells[3:]) for cells in (line.split("|") for line in lines)]
    return "\n".join(lines)


def _uploaded_results(
    detectors: dict[str, Detector], confirms: Sequence[int], corpus: Sequence[Series]
) -> dict[str, Quality]:
    """The rows of the table as uploaded: each detector's alerts sent after each of `confirms`
    agreeing detections; for one detector, also after as many detections with the windowed test
    ignored (what it adds)."""
    rules = [Sent(confirm=n) for n in confirms]
    if len(detectors) == 1:
        rules += [Sent(confirm=n, windowed=False) for n in confirms if n]
    results = {}
    for name, detect in detectors.items():
        made = uploaded_quality(detect=detect, sent=rules, corpus=corpus)
        for rule, q in made.items():
            results[rule.name if len(detectors) == 1 else f"{name}; {rule.name}"] = q
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchhub.regressions.quality")
    parser.add_argument("--write", action="store_true", help=f"record the figures in {RECORDED}")
    parser.add_argument(
        "--as-uploaded",
        action="store_true",
        help="the alerts stored over each series uploaded a run at a time (minutes)",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        nargs="+",
        default=[CONFIRM],
        help=f"as uploaded: count an alert once this many detections with the windowed test "
        f"agreeing found it ({CONFIRM}, as BenchHub notifies; 0: every change stored); with "
        "--product, also as many detections with the test ignored",
    )
    parser.add_argument("--product", action="store_true", help="BenchHub's detector only")
    args = parser.parse_args(argv)
    corpus = corpus_load()
    detectors: dict[str, Detector] = {PRODUCT: default_detector} if args.product else DETECTORS
    if args.as_uploaded:
        results = _uploaded_results(detectors, args.confirm, corpus)
    else:
        results = {
            name: quality(detect=detect, corpus=corpus) for name, detect in detectors.items()
        }
    print(table(results, points=not args.as_uploaded))
    if not args.as_uploaded:
        print()
        print(drift_table(drift_quality(corpus=corpus)))
    if args.write:
        figures = recorded_figures() if RECORDED.exists() else {}
        if args.as_uploaded:
            (sent,) = uploaded_quality(
                detect=default_detector, sent=[Sent()], corpus=uploaded_sample(corpus)
            ).values()
            figures[UPLOADED] = sent.figures()
        else:
            figures.update({name: q.figures() for name, q in results.items()})
        RECORDED.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
