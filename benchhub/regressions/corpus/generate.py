"""Make the labelled corpus of pgbench-like history (regressions.corpus), deterministically:

    .venv/bin/python -m benchhub.regressions.corpus.generate          # writes history.json

Each series is one value per run, a run a day, POINTS runs (three months), around a level drawn
log-uniformly between 500 and 50,000 tps. The run-to-run noise is log-normal with one of the
spreads the repository's own figures give (NOISES). On top of it, one shape per series, each
labelled:

- `flat`: noise only.
- `bimodal`: a run lands in a low mode 3 to 8% under the other with probability 0.3 (a fresh
  cluster's layout, huge pages or not): no change.
- `dips`: a run is 10 to 35% low with probability 0.04 (a checkpoint inside a short run): single
  low outliers, listed, no change.
- `host`: the level moves 3 to 15% up or down where the host changed (a kernel, a governor):
  labelled `host` with a split at that run, as BenchHub records it (compare.splits): no alert.
- `drift`: the level falls 0.25, 0.5 or 1% a week from a run in the first month on: labelled
  `drift`.
- `step`: one step of 1, 2, 3, 5, 10 or 20% up or down, at least MARGIN runs from either end
  (8 series per size, direction and noise from 3% on, 2 below), a quarter of them with dips
  too, a quarter bimodal; and `steps`: two steps of 5 to 20% at least 20 runs apart. Labelled
  `step`: an alert should follow.
"""

from __future__ import annotations

import sys

import numpy as np

from benchhub.regressions.corpus import PATH, Label, Series, corpus_dump

SEED = 20261206
POINTS = 100
MARGIN = 10
# Run-to-run spread (sd of log tps): 1% a quiet dedicated host; 2% what the repository's
# simulations take for a benchmark host (bench.simulate.RunShape.run_cv, docs/statistics.md);
# 6% what adjacent 5 s passes on the quiet development VM differed by (5.8%, and 7% for 10 s
# passes: docs/performance-log.md, the agent's paired ratio).
NOISES = (0.01, 0.02, 0.06)
STEPS = (0.01, 0.02, 0.03, 0.05, 0.10, 0.20)
DRIFTS_PER_WEEK = (0.0025, 0.005, 0.01)
DIP_CHANCE = 0.04
LOW_MODE_CHANCE = 0.3
STEP_SHAPES = ("plain", "dips", "plain", "bimodal", "plain", "dips", "plain", "bimodal")


def _base(rng: np.random.Generator, noise: float) -> tuple[float, np.ndarray]:
    level = float(np.exp(rng.uniform(np.log(500), np.log(50_000))))
    return level, np.exp(rng.normal(0.0, noise, POINTS))


def _dips(rng: np.random.Generator, values: np.ndarray) -> list[int]:
    at = [i for i in range(POINTS) if rng.random() < DIP_CHANCE]
    for i in at:
        values[i] *= 1 - rng.uniform(0.10, 0.35)
    return at


def _bimodal(rng: np.random.Generator, values: np.ndarray, noise: float) -> float:
    """Puts runs in the low mode; returns the series' whole run-to-run spread (the sd of the
    mixture: the noise and the modes' own)."""
    gap = rng.uniform(0.03, 0.08)
    values *= np.where(rng.random(POINTS) < LOW_MODE_CHANCE, 1 - gap, 1.0)
    return round(float(np.sqrt(noise**2 + LOW_MODE_CHANCE * (1 - LOW_MODE_CHANCE) * gap**2)), 4)


def _sign(rng: np.random.Generator) -> int:
    return 1 if rng.random() < 0.5 else -1


def _series(
    name: str,
    noise: float,
    values: np.ndarray,
    *,
    shapes: list[str],
    splits: list[int] | None = None,
    changes: list[Label] | None = None,
    outliers: list[int] | None = None,
) -> Series:
    return Series(
        name=name,
        noise=noise,
        values=[round(float(v), 1) for v in values],
        splits=splits or [],
        changes=changes or [],
        outliers=outliers or [],
        shapes=shapes,
    )


def flat(rng: np.random.Generator, name: str, noise: float, shape: str) -> Series:
    level, values = _base(rng, noise)
    values *= level
    outliers: list[int] = []
    if shape == "dips":
        outliers = _dips(rng, values)
    elif shape == "bimodal":
        noise = _bimodal(rng, values, noise)
    return _series(name, noise, values, outliers=outliers, shapes=[shape])


def host_change(rng: np.random.Generator, name: str, noise: float) -> Series:
    level, values = _base(rng, noise)
    at = int(rng.integers(MARGIN, POINTS - MARGIN))
    magnitude = _sign(rng) * rng.uniform(0.03, 0.15)
    values *= level
    values[at:] *= 1 + magnitude
    label = Label(index=at, magnitude=round(magnitude, 4), kind="host")
    return _series(name, noise, values, splits=[at], changes=[label], shapes=["host"])


def drift(rng: np.random.Generator, name: str, noise: float, per_week: float) -> Series:
    level, values = _base(rng, noise)
    start = int(rng.integers(0, 30))
    days = np.maximum(np.arange(POINTS) - start, 0)
    values *= level * (1 - per_week / 7) ** days
    total = (1 - per_week / 7) ** (POINTS - 1 - start) - 1
    label = Label(index=start, magnitude=round(total, 4), kind="drift")
    return _series(name, noise, values, changes=[label], shapes=["drift"])


def steps(
    rng: np.random.Generator, name: str, noise: float, magnitudes: list[float], shape: str
) -> Series:
    level, values = _base(rng, noise)
    values *= level
    places: list[int] = []
    while len(places) < len(magnitudes):
        at = int(rng.integers(MARGIN, POINTS - MARGIN))
        if all(abs(at - p) >= 20 for p in places):
            places.append(at)
    places.sort()
    labels = []
    for at, magnitude in zip(places, magnitudes, strict=True):
        values[at:] *= 1 + magnitude
        labels.append(Label(index=at, magnitude=round(magnitude, 4), kind="step"))
    outliers: list[int] = []
    if shape == "dips":
        outliers = _dips(rng, values)
    elif shape == "bimodal":
        noise = _bimodal(rng, values, noise)
    return _series(name, noise, values, changes=labels, outliers=outliers, shapes=["step", shape])


def corpus(seed: int = SEED) -> list[Series]:
    """The whole corpus, the same for the same seed."""
    rng = np.random.default_rng(seed)
    made: list[Series] = []
    add = made.append
    for noise in NOISES:
        tag = f"{noise:.0%}"
        for i in range(12):
            add(flat(rng, f"flat-{tag}-{i}", noise, "flat"))
        for shape in ("bimodal", "dips"):
            for i in range(6):
                add(flat(rng, f"{shape}-{tag}-{i}", noise, shape))
        for i in range(6):
            add(host_change(rng, f"host-{tag}-{i}", noise))
        for per_week in DRIFTS_PER_WEEK:
            for i in range(2):
                add(drift(rng, f"drift-{per_week:.2%}-{tag}-{i}", noise, per_week))
        for step in STEPS:
            for sign, direction in ((-1, "down"), (1, "up")):
                # Steps of 3% and more are what the alerts must not miss: more of them.
                shapes = STEP_SHAPES if step >= 0.03 else STEP_SHAPES[:2]
                for i, shape in enumerate(shapes):
                    name = f"step-{direction}-{step:.0%}-{tag}-{i}"
                    add(steps(rng, name, noise, [sign * step], shape))
        for i in range(4):
            magnitudes = [_sign(rng) * rng.uniform(0.05, 0.20) for _ in range(2)]
            shape = "bimodal" if i % 2 else "plain"
            add(steps(rng, f"steps-{tag}-{i}", noise, magnitudes, shape))
    return made


def main() -> int:
    PATH.write_text(corpus_dump(corpus()))
    print(f"wrote {PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
