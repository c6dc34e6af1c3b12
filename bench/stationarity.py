"""How often the check of a repeat's progress (stats.stationarity) flags a run that held still,
and how often it finds one that did not, on simulated per-second tps (docs/statistics.md,
"Steady inside the run").

Per-second pgbench tps is autocorrelated: the seconds are an AR(1) process around the level
(`phi`, the correlation of one second with the next; `sd`, their spread), optionally with a
checkpoint every 60 s that takes 20% off five seconds. Steady runs have nothing else; trending
runs lose `loss` of their level in a straight line over the run.

    .venv/bin/python -m bench.stationarity --runs 200
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from benchhub.stats.stationarity import unsteadiness

STEADY = ((0.02, 0.5, False), (0.05, 0.8, False), (0.03, 0.7, True))
LENGTHS = (60, 120, 300, 600)
LOSSES = (0.05, 0.1, 0.2)


def seconds(
    rng: np.random.Generator, n: int, *, sd: float, phi: float, dips: bool, loss: float = 0.0
) -> np.ndarray:
    noise = rng.normal(0, sd * np.sqrt(1 - phi**2), n)
    wander = np.zeros(n)
    for i in range(1, n):
        wander[i] = phi * wander[i - 1] + noise[i]
    values = 1000.0 * np.linspace(1, 1 - loss, n) * (1 + wander)
    if dips:
        for start in range(int(rng.integers(0, 60)), n, 60):
            values[start : start + 5] *= 0.8
    return values


def flagged(
    rng: np.random.Generator,
    runs: int,
    n: int,
    *,
    sd: float,
    phi: float,
    dips: bool,
    loss: float = 0.0,
) -> int:
    found = 0
    for _ in range(runs):
        values = seconds(rng, n, sd=sd, phi=phi, dips=dips, loss=loss)
        found += unsteadiness(t=list(range(1, n + 1)), tps=[float(v) for v in values]) is not None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.stationarity")
    parser.add_argument("--runs", type=int, default=200, help="simulated runs a cell")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| steady runs: sd, phi, checkpoints | " + " | ".join(f"{n} s" for n in LENGTHS) + " |")
    print("|---" * (len(LENGTHS) + 1) + "|")
    for sd, phi, dips in STEADY:
        cells = [flagged(rng, args.runs, n, sd=sd, phi=phi, dips=dips) for n in LENGTHS]
        name = f"{sd:.0%}, {phi}, {'yes' if dips else 'no'}"
        print(f"| {name} | " + " | ".join(f"{c} of {args.runs}" for c in cells) + " |")
    print()
    print(
        "| loss over the run (3%, 0.7, checkpoints) | "
        + " | ".join(f"{n} s" for n in LENGTHS)
        + " |"
    )
    print("|---" * (len(LENGTHS) + 1) + "|")
    for loss in LOSSES:
        cells = [
            flagged(rng, args.runs, n, sd=0.03, phi=0.7, dips=True, loss=loss) for n in LENGTHS
        ]
        print(f"| {loss:.0%} | " + " | ".join(f"{c} of {args.runs}" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
