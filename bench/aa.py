"""A/A on this machine: one PostgreSQL version against itself, each side made of separate
jobs, and what the verdicts say about it (docs/performance.md, "A/A").

Each comparison has two sides, A and A', of the same prebuilt PostgreSQL, and each side is
`--runs` separate runs as separate jobs make them: a fresh cluster (the agent's own Cluster
class), its own data load (`pgbench -i -s 1`), then the whole sweep (each client level,
`--repeats` repeats, each after a CHECKPOINT, with the argv the agent builds: `-P 1 -r`,
-j = clients), then the cluster is gone. The runs go in the order A A' A' A ... so that
neither side always runs first. Repeats inside a run share its cluster, data load and hour; runs
share nothing, which is the variation the verdicts' run-level interval must cover.

Each repeat counts as its steady-state mean (stats.repeats.run_mean after the warm-up;
pgbench's own tps below 10 steady seconds) and carries its run, and the comparison gets the
verdicts the compare page shows: per level (level_verdict: run means as units) and over the
curve (curve_verdict: the geometric mean and its interval, Holm over the levels and the
geometric mean together). A comparison is called different at the whole-curve level when any
level or the geometric mean is faster or slower after Holm. Goal: at most 5% of comparisons,
reported with the Clopper-Pearson interval of that rate. `--runs 1` is what one A/A job does
(one run a side, repeats as units).

    .venv/bin/python -m bench.aa --comparisons 40 --runs 2 --repeats 2 --duration 2
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

from scipy.stats import binomtest

from benchhub.compare.verdict_text import curve_summary
from benchhub.stats.repeats import Repeat, run_mean, steady_state
from benchhub.stats.verdicts import CurveVerdict, curve_verdict, level_verdict

VERSION = "14"


def _cluster(work: Path, index: int):
    from benchhub_runner.measure import pgbench
    from benchhub_runner.servers.cluster import Cluster, free_port

    from benchhub.testing import installs

    client = installs.client_bindir()
    cluster = Cluster(installation=installs.prebuilt(VERSION), client_bindir=client,
                      workdir=work / f"v{index}", port=free_port())  # fmt: skip
    cluster.initdb()
    cluster.start()
    target = pgbench.Target(host=str(cluster.socket_dir), port=cluster.port)
    init = pgbench.Process(pgbench.init_argv(bindir=client, target=target, scale=1))
    if init.wait(timeout_s=300).returncode != 0:
        raise RuntimeError("pgbench -i failed")
    return cluster, target


def _measure(cluster, target, *, clients: int, duration_s: float, seed: int) -> Repeat:
    from benchhub_runner.measure import pgbench
    from benchhub_runner.parse import parse_run_output

    from benchhub.testing import installs

    client = installs.client_bindir()
    cluster.checkpoint()
    measurement = pgbench.Measurement(clients=clients, threads=clients, duration_s=duration_s,
                                      builtin="select-only", query_mode="prepared")  # fmt: skip
    args = pgbench.argv(
        bindir=client, target=target, m=measurement, version=pgbench.client_version(client)
    )
    done = pgbench.Process(args).wait(timeout_s=duration_s + 120)
    parsed = parse_run_output(done.output)
    if parsed.tps is None:
        raise RuntimeError(f"pgbench at {clients} clients gave no tps:\n{done.output}")
    seconds = steady_state([(p.t, p.tps) for p in parsed.progress], duration_s=duration_s)
    return Repeat(tps=run_mean(overall=parsed.tps, samples=seconds, seed=seed))


def comparison(
    *, levels: tuple[int, ...], runs: int, repeats: int, duration_s: float
) -> CurveVerdict:
    """One A/A comparison: `runs` separate runs a side, each on its own fresh cluster."""
    series: list[dict[int, list[Repeat]]] = [{}, {}]
    order = [side for _ in range((runs + 1) // 2) for side in (0, 1, 1, 0)][: 2 * runs]
    seed = 0
    for number, side in enumerate(order):
        for clients, measured in _run(levels=levels, repeats=repeats, duration_s=duration_s,
                                      run=number, seed=seed):  # fmt: skip
            series[side].setdefault(clients, []).append(measured)
        seed += len(levels) * repeats
    verdicts = {c: level_verdict(baseline=series[0][c], other=series[1][c]) for c in levels}
    return curve_verdict(levels=verdicts)


def _run(
    *, levels: tuple[int, ...], repeats: int, duration_s: float, run: int, seed: int
) -> list[tuple[int, Repeat]]:
    """One run as one job makes it: a fresh cluster and data load, the whole sweep, then gone."""
    work = Path(tempfile.mkdtemp(prefix="benchhub-bench-aa-"))
    work.chmod(0o755)  # the unprivileged server user must traverse it
    cluster = None
    try:
        cluster, target = _cluster(work, run)
        measured = []
        for clients in levels:
            for _ in range(repeats):
                seed += 1
                one = _measure(cluster, target, clients=clients, duration_s=duration_s, seed=seed)
                measured.append((clients, dataclasses.replace(one, run=run)))
        return measured
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def different(curve: CurveVerdict) -> bool:
    """Called faster or slower anywhere on the curve: a level or the geometric mean, after
    Holm's correction over all of them (CurveVerdict.called)."""
    return curve.called


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=40)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=2, help="separate runs (jobs) a side")
    parser.add_argument("--repeats", type=int, default=2, help="repeats inside each run")
    parser.add_argument("--duration", type=float, default=2.0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    called = 0
    for number in range(1, args.comparisons + 1):
        curve = comparison(levels=tuple(args.levels), runs=args.runs, repeats=args.repeats,
                           duration_s=args.duration)  # fmt: skip
        called += different(curve)
        summary = curve_summary(curve, baseline_label="A", other_label="A'")
        print(f"{number:2d} {'DIFFERENT' if different(curve) else 'ok       '} {summary}")
        sys.stdout.flush()
    low, high = rate_interval(called, args.comparisons)
    print(
        f"A/A: {called} of {args.comparisons} comparisons called different at the whole-curve "
        f"level ({called / args.comparisons:.1%}, Clopper-Pearson 95% {low:.1%} to {high:.1%}; "
        f"levels {args.levels}, {args.runs} separate runs a side of {args.repeats} repeats, "
        f"{args.duration:g} s each; {time.monotonic() - started:.0f} s)"
    )
    return 0


def rate_interval(called: int, total: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of a rate of `called` in `total`."""
    found = binomtest(called, total).proportion_ci(confidence_level=0.95, method="exact")
    return float(found.low), float(found.high)


if __name__ == "__main__":
    sys.exit(main())
