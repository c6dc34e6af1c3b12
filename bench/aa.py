"""A/A on this machine: one PostgreSQL version against itself, as an A/A job runs it, and what
the verdicts say about it (docs/performance.md, "A/A").

Each comparison is what an A/A job does: two fresh clusters of the same prebuilt PostgreSQL
(the agent's own Cluster class, `pgbench -i -s 1`), then for each client level and repeat the
same pgbench run on one series and then the other (interleaved, as the agent orders a job;
both servers stay up, where the agent runs one at a time), each after a CHECKPOINT, with the
argv the agent builds (`-P 1 -r`, -j = clients). Each repeat counts as its steady-state mean
(compare.repeats.run_mean after the warm-up; pgbench's own tps below 10 steady seconds), and
the comparison gets the verdicts the compare page shows: per level (level_verdict) and over
the curve (curve_verdict: Holm, geometric-mean interval). A comparison is called different at
the whole-curve level when any level is faster or slower after Holm, or when the
geometric-mean interval excludes 1. Goal: at most 1 of 20, the 5% that 95% intervals allow.

    .venv/bin/python -m bench.aa --comparisons 20      # about 12 minutes here
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchhub.compare.repeats import Repeat, run_mean, steady_state
from benchhub.compare.verdicts import CurveVerdict, Verdict, curve_verdict, level_verdict

VERSION = "14"


def _cluster(work: Path, index: int):
    from benchhub_runner import pgbench
    from benchhub_runner.cluster import Cluster, free_port

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
    from benchhub_runner import pgbench
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


def comparison(*, levels: tuple[int, ...], repeats: int, duration_s: float) -> CurveVerdict:
    """One A/A comparison: two series of the same version on two fresh clusters."""
    work = Path(tempfile.mkdtemp(prefix="benchhub-bench-aa-"))
    work.chmod(0o755)  # the unprivileged server user must traverse it
    clusters = []
    try:
        clusters = [_cluster(work, i) for i in range(2)]
        series: list[dict[int, list[Repeat]]] = [{}, {}]
        seed = 0
        for clients in levels:
            for _ in range(repeats):
                for index, (cluster, target) in enumerate(clusters):
                    seed += 1
                    measured = _measure(
                        cluster, target, clients=clients, duration_s=duration_s, seed=seed
                    )
                    series[index].setdefault(clients, []).append(measured)
        verdicts = {c: level_verdict(baseline=series[0][c], other=series[1][c]) for c in levels}
        return curve_verdict(levels=verdicts, baseline_label="A", other_label="A'")
    finally:
        for cluster, _ in clusters:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def different(curve: CurveVerdict) -> bool:
    moved = curve.counts[Verdict.FASTER] + curve.counts[Verdict.SLOWER]
    excludes_one = curve.low is not None and (curve.low > 1 or (curve.high or 0) < 1)
    return bool(moved) or excludes_one


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=20)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    called = 0
    for number in range(1, args.comparisons + 1):
        curve = comparison(
            levels=tuple(args.levels), repeats=args.repeats, duration_s=args.duration
        )
        called += different(curve)
        print(f"{number:2d} {'DIFFERENT' if different(curve) else 'ok       '} {curve.summary}")
        sys.stdout.flush()
    print(
        f"A/A: {called} of {args.comparisons} comparisons called different at the whole-curve "
        f"level (levels {args.levels}, {args.repeats} repeats a side, {args.duration:g} s "
        f"each; {time.monotonic() - started:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
