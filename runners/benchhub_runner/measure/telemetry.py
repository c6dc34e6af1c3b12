"""OS telemetry while pgbench measures: one sample per interval from /proc, in a background thread.

Each sample holds, over the interval just ended: CPU split (percent of all CPUs), context switches
and interrupts per second, the run queue, memory, the I/O of the block device holding the data
directory (bytes/s, IOPS, %util like iostat's), and the CPU used by the watched pgbench client
processes and their children (percent of ONE core), so a client-bound result can be flagged.

The sampler reads a handful of /proc files per interval and starts no processes, so its own cost
stays far below 1% of a core. Usage::

    with TelemetrySampler(data_dir=pgdata, interval_s=1.0) as sampler:
        sampler.watch(pgbench.pid)
        pgbench.wait()
    samples = sampler.samples()
    summary = summarize(samples)
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..host.disks import DiskCounters, disk_rates, diskstats_device, parse_diskstats
from ..host.proctree import descendants, read_process
from ..host.reading import parse_colon_pairs, read_text

log = logging.getLogger(__name__)

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

SERIES = (
    "cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_idle_pct", "cpu_steal_pct",
    "ctx_switches_per_s", "interrupts_per_s", "procs_running", "mem_used_bytes",
    "mem_cached_bytes", "disk_read_bytes_per_s", "disk_write_bytes_per_s", "disk_read_iops",
    "disk_write_iops", "disk_util_pct", "client_cpu_pct",
)  # fmt: skip

# Rule of thumb for client_bound(), in percent of one core per pgbench thread and of the host's
# CPU idle; see its docstring.
THREAD_SATURATED_PCT = 90.0
BUSY_THREAD_PCT = 50.0
IDLE_FLOOR_PCT = 10.0


@dataclass(frozen=True)
class Snapshot:
    """Raw cumulative counters at one moment; two of them make a sample."""

    at: float  # time.monotonic() seconds
    cpu: tuple[int, ...]  # the "cpu" line of /proc/stat, in clock ticks
    ctxt: int
    intr: int
    procs_running: int
    mem_used: int | None
    mem_cached: int | None
    disk: DiskCounters | None
    # (pid, start time in ticks since boot) -> utime + stime ticks; the start time tells a
    # recycled pid from the process we saw before.
    clients: dict[tuple[int, int], int] = field(default_factory=dict)


def parse_proc_stat(text: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name == "cpu":
            values["cpu"] = tuple(int(v) for v in rest.split())
        elif name in ("ctxt", "procs_running"):
            values[name] = int(rest)
        elif name == "intr":
            values["intr"] = int(rest.split()[0])  # the first number is the total
    return values


def parse_memory(text: str) -> tuple[int | None, int | None]:
    """(used, cached) bytes as procps ``free`` counts them: used = MemTotal - MemAvailable,
    cache = Cached + SReclaimable."""
    kib = {k: int(v.split()[0]) for k, v in parse_colon_pairs(text).items() if v}
    if "MemTotal" not in kib or "MemAvailable" not in kib:
        return None, None
    used = kib["MemTotal"] - kib["MemAvailable"]
    return used * 1024, (kib.get("Cached", 0) + kib.get("SReclaimable", 0)) * 1024


def take_snapshot(*, proc: Path, device: str, pids: set[int], at: float) -> Snapshot:
    stat = parse_proc_stat(read_text(proc / "stat") or "")
    used, cached = parse_memory(read_text(proc / "meminfo") or "")
    disk = parse_diskstats(read_text(proc / "diskstats") or "", device) if device else None
    clients = dict(filter(None, (read_process(pid, proc=proc) for pid in sorted(pids))))
    return Snapshot(
        at=at,
        cpu=stat.get("cpu", ()),
        ctxt=stat.get("ctxt", 0),
        intr=stat.get("intr", 0),
        procs_running=stat.get("procs_running", 0),
        mem_used=used,
        mem_cached=cached,
        disk=disk,
        clients=clients,
    )


def cpu_split(before: tuple[int, ...], after: tuple[int, ...]) -> dict[str, float | None]:
    """Percent of all CPUs. user includes nice; system includes irq and softirq (as vmstat's
    "sy"); guest time is already inside user, so only the first eight fields are summed."""
    d = [b - a for a, b in zip(before[:8], after[:8], strict=False)] + [0] * 8
    user, nice, system, idle, iowait, irq, softirq, steal = d[:8]
    total = sum(d[:8])
    if total <= 0:
        return dict.fromkeys(("user", "system", "iowait", "idle", "steal"))

    def pct(ticks: int) -> float:
        return round(100.0 * ticks / total, 2)

    return {
        "user": pct(user + nice),
        "system": pct(system + irq + softirq),
        "iowait": pct(iowait),
        "idle": pct(idle),
        "steal": pct(steal),
    }


def client_ticks(a: Snapshot, b: Snapshot, *, first_seen_after: float) -> int:
    """CPU ticks the watched processes used between two snapshots.

    A process in both counts its delta. One seen first in ``b`` counts all its time if it
    started after ``first_seen_after`` (seconds since boot: we could not have seen it before);
    otherwise only from now on. A process that exited loses its last partial interval.
    """
    ticks = 0
    for key, used in b.clients.items():
        if key in a.clients:
            ticks += used - a.clients[key]
        elif key[1] / CLOCK_TICKS >= first_seen_after:
            ticks += used
    return ticks


def make_sample(
    a: Snapshot, b: Snapshot, *, t: float, device: str, client_ticks: int | None
) -> dict[str, Any]:
    seconds = b.at - a.at
    cpu = cpu_split(a.cpu, b.cpu)
    disk = disk_rates(a.disk, b.disk, seconds)

    def rate(before: int, after: int) -> float | None:
        return round((after - before) / seconds, 1) if seconds > 0 else None

    return {
        "t": round(t, 3),
        "cpu_user_pct": cpu["user"],
        "cpu_system_pct": cpu["system"],
        "cpu_iowait_pct": cpu["iowait"],
        "cpu_idle_pct": cpu["idle"],
        "cpu_steal_pct": cpu["steal"],
        "ctx_switches_per_s": rate(a.ctxt, b.ctxt),
        "interrupts_per_s": rate(a.intr, b.intr),
        "procs_running": b.procs_running,
        "mem_used_bytes": b.mem_used,
        "mem_cached_bytes": b.mem_cached,
        "disk_device": device or None,
        "disk_read_bytes_per_s": disk["read_bps"],
        "disk_write_bytes_per_s": disk["write_bps"],
        "disk_read_iops": disk["read_iops"],
        "disk_write_iops": disk["write_iops"],
        "disk_util_pct": disk["util"],
        "client_cpu_pct": round(100.0 * client_ticks / CLOCK_TICKS / seconds, 1)
        if seconds > 0 and client_ticks is not None
        else None,
    }


def uptime_s(*, proc: Path) -> float:
    """Seconds since boot, the clock of the processes' start times (0.0 if unreadable)."""
    try:
        return float((read_text(proc / "uptime") or "0").split()[0])
    except (IndexError, ValueError):
        return 0.0


class TelemetrySampler:
    """Samples /proc every ``interval_s`` in a daemon thread between start() and stop().

    ``data_dir`` selects the block device whose I/O is reported (none: disk fields are None).
    The first sample comes one interval after start; ``t`` is the end of its interval in seconds
    since start. ``proc`` and ``sys`` are injectable for tests.
    """

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        interval_s: float = 1.0,
        child_scan_s: float = 5.0,
        proc: Path = Path("/proc"),
        sys: Path = Path("/sys"),
    ) -> None:
        self.interval_s = interval_s
        self.child_scan_s = child_scan_s
        self.proc = proc
        self.device = diskstats_device(data_dir, proc=proc, sys=sys) if data_dir else ""
        self.error: str | None = None  # why sampling stopped early, if it did
        self.thread_cpu_s = 0.0  # the sampler thread's own CPU time, for overhead checks
        self._roots: set[int] = set()
        self._baselines: dict[tuple[int, int], int] = {}  # CPU ticks at watch() time
        self._known: set[int] = set()  # watched processes and descendants alive at last sample
        self._last_scan = float("-inf")
        self._started = 0.0
        self._prev: Snapshot | None = None
        self._prev_uptime = 0.0
        self._samples: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, pid: int) -> None:
        """Count this process and its descendants in ``client_cpu_pct`` from now on.

        Its CPU time is read right here, so the next sample counts only what it used after this
        call, however long it had been running before.
        """
        seen = read_process(pid, proc=self.proc)
        with self._lock:
            self._roots.add(pid)
            if seen is not None:
                self._baselines.setdefault(*seen)

    def samples(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._samples)

    def start(self) -> TelemetrySampler:
        # The first snapshot is taken in the caller's thread: t=0 is when start() returns, and a
        # process started right after it is known to be new (it started after this uptime).
        self._started = time.monotonic()
        self._prev, self._prev_uptime = self._snapshot(set()), uptime_s(proc=self.proc)
        self._thread = threading.Thread(target=self._run, name="telemetry", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> TelemetrySampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            self._sample_until_stopped()
        except Exception:
            # Telemetry must never take the benchmark down: keep what was sampled and say why.
            log.exception("telemetry sampling stopped")
            self.error = "sampling stopped early; see the runner log"
        self.thread_cpu_s = time.thread_time()

    def _sample_until_stopped(self) -> None:
        next_at = self._started + self.interval_s
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            # The next deadline on a fixed grid from the start, so a slow read does not shift the
            # later samples, and a stall (a suspended VM) skips grid points instead of bursting.
            behind = time.monotonic() - next_at
            next_at += self.interval_s * max(1, -(-behind // self.interval_s))
            sample = self._sample()
            with self._lock:
                self._samples.append(sample)

    def _sample(self) -> dict[str, Any]:
        with self._lock:
            roots, baselines, self._baselines = set(self._roots), self._baselines, {}
        self._known = descendants(roots | self._known, proc=self.proc, scan=self._scan_due())
        cur, cur_uptime = self._snapshot(self._known), uptime_s(proc=self.proc)
        self._known = {pid for pid, _ in cur.clients}
        if self._prev is None:
            raise RuntimeError("start() takes the first snapshot")
        prev = replace(self._prev, clients={**baselines, **self._prev.clients})
        used = client_ticks(prev, cur, first_seen_after=self._prev_uptime) if roots else None
        sample = make_sample(
            prev, cur, t=cur.at - self._started, device=self.device, client_ticks=used
        )
        self._prev, self._prev_uptime = cur, cur_uptime
        return sample

    def _scan_due(self) -> bool:
        if time.monotonic() - self._last_scan < self.child_scan_s:
            return False
        self._last_scan = time.monotonic()
        return True

    def _snapshot(self, pids: set[int]) -> Snapshot:
        return take_snapshot(proc=self.proc, device=self.device, pids=pids, at=time.monotonic())


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"<series>_mean": float|None, "<series>_max": float|None, ..., "samples": n}``;
    None values (a series the host could not provide) are left out of the figures."""
    summary: dict[str, Any] = {"samples": len(samples)}
    for name in SERIES:
        values = [s[name] for s in samples if s.get(name) is not None]
        summary[f"{name}_mean"] = round(sum(values) / len(values), 2) if values else None
        summary[f"{name}_max"] = max(values) if values else None
    return summary


def client_bound(samples: list[dict[str, Any]], *, client_threads: int | None) -> bool | None:
    """Whether the pgbench client itself was the bottleneck, judged from its own threads and
    the host's idle CPU; None when the samples lack the client's CPU or the thread count is not
    known. The server judges every uploaded repeat with this function too.

    pgbench runs `client_threads` threads (-j, summed over the measured streams) and a thread
    uses one core at most. Over the samples, the client's mean CPU per thread (percent of one
    core) is compared with two limits: 90% of a core, where its threads were saturated however
    idle the rest of the host was; or 50% of a core while the host's mean idle CPU stayed under
    10%, where its threads had no core to spare and competed with the server for CPU. Either
    way the tps measured the client as much as the server. A share of the whole machine misses
    both: pgbench -j 2 at 190% of a core is saturated on a 64-core host.
    """
    client = _mean(samples, "client_cpu_pct")
    if client is None or not client_threads or client_threads < 1:
        return None
    per_thread = client / client_threads
    if per_thread > THREAD_SATURATED_PCT:
        return True
    idle = _mean(samples, "cpu_idle_pct")
    return idle is not None and idle < IDLE_FLOOR_PCT and per_thread > BUSY_THREAD_PCT


def _mean(samples: list[dict[str, Any]], name: str) -> float | None:
    values = [float(s[name]) for s in samples if s.get(name) is not None]
    return sum(values) / len(values) if values else None
