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

from .sysinfo import block_device_for, parse_colon_pairs, read_text, whole_disks

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
class DiskCounters:
    reads: int
    read_sectors: int
    writes: int
    write_sectors: int
    io_ticks_ms: int


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


def parse_diskstats(text: str, device: str) -> DiskCounters | None:
    """The device's line of /proc/diskstats; sectors there are always 512 bytes."""
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 14 and f[2] == device:
            return DiskCounters(
                reads=int(f[3]),
                read_sectors=int(f[5]),
                writes=int(f[7]),
                write_sectors=int(f[9]),
                io_ticks_ms=int(f[12]),
            )
    return None


def parse_memory(text: str) -> tuple[int | None, int | None]:
    """(used, cached) bytes as procps ``free`` counts them: used = MemTotal - MemAvailable,
    cache = Cached + SReclaimable."""
    kib = {k: int(v.split()[0]) for k, v in parse_colon_pairs(text).items() if v}
    if "MemTotal" not in kib or "MemAvailable" not in kib:
        return None, None
    used = kib["MemTotal"] - kib["MemAvailable"]
    return used * 1024, (kib.get("Cached", 0) + kib.get("SReclaimable", 0)) * 1024


def read_process(pid: int, *, proc: Path) -> tuple[tuple[int, int], int] | None:
    """((pid, start time), utime + stime) from /proc/<pid>/stat, or None once it has gone."""
    text = read_text(proc / str(pid) / "stat")
    if not text:
        return None
    # The command name is in parentheses and may itself contain spaces and parentheses.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None  # a read racing the process's exit can come back short
    return (pid, start), utime + stime


def parent_of(pid: int, *, proc: Path) -> int | None:
    fields = (read_text(proc / str(pid) / "stat") or ")").rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def children_of(pid: int, *, proc: Path) -> list[int] | None:
    """Children from /proc/<pid>/task/*/children, or None when the kernel lacks that file
    (CONFIG_PROC_CHILDREN is off on some distribution kernels)."""
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        text = read_text(task / "children")
        if text is None and task.exists():
            return None
        found.extend(int(c) for c in (text or "").split())  # None: the thread has just exited
    return found


def all_pids(*, proc: Path) -> list[int]:
    try:
        return [int(p.name) for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return []


def descendants(pids: set[int], *, proc: Path, scan: bool) -> set[int]:
    """The given processes plus their descendants.

    Children come from the kernel's children files when it has them; otherwise from a scan of
    every process's parent, which costs one read per process on the machine (thousands with
    a large max_connections), so the caller allows it only every few seconds.
    """
    found: set[int] = set()
    queue, parents = list(pids), None
    while queue:
        pid = queue.pop()
        if pid in found:
            continue
        found.add(pid)
        kids = children_of(pid, proc=proc)
        if kids is None and scan:
            if parents is None:
                parents = {p: parent_of(p, proc=proc) for p in all_pids(proc=proc)}
            kids = [p for p, parent in parents.items() if parent == pid]
        queue.extend(kids or [])
    return found


def diskstats_device(data_dir: Path, *, proc: Path, sys: Path) -> str:
    """The /proc/diskstats name to watch for ``data_dir``, or "" (tmpfs, overlay, no /sys).

    A partition is watched as its whole disk: %util is a property of the disk, which the
    partition shares with its neighbours (WAL elsewhere on it still competes). A device-mapper
    volume is watched as itself (``dm-N`` has its own counters and may span several disks).
    """
    name = block_device_for(data_dir, proc=proc, sys=sys)
    if not name:
        return ""
    if (sys / "class/block" / name / "partition").exists():
        name = whole_disks(name, sys=sys)[0]
    listed = read_text(proc / "diskstats") or ""
    if parse_diskstats(listed, name) is None:
        # Not listed under its own name (hidden multipath paths, say): try what lies beneath.
        name = next((d for d in whole_disks(name, sys=sys) if parse_diskstats(listed, d)), "")
    return name


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


def disk_rates(
    a: DiskCounters | None, b: DiskCounters | None, seconds: float
) -> dict[str, float | None]:
    if a is None or b is None or seconds <= 0:
        return dict.fromkeys(("read_bps", "write_bps", "read_iops", "write_iops", "util"))
    return {
        "read_bps": round((b.read_sectors - a.read_sectors) * 512 / seconds, 1),
        "write_bps": round((b.write_sectors - a.write_sectors) * 512 / seconds, 1),
        "read_iops": round((b.reads - a.reads) / seconds, 2),
        "write_iops": round((b.writes - a.writes) / seconds, 2),
        # io_ticks counts ms with at least one request in flight: busy time, capped like iostat.
        "util": round(min(100.0, (b.io_ticks_ms - a.io_ticks_ms) / (seconds * 10)), 2),
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
