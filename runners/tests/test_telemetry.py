"""The telemetry sampler: exact rates from two fixture snapshots, and live runs on this machine
(a busy child, fsynced writes, and the sampler's own CPU cost)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchhub_runner.host import proctree
from benchhub_runner.measure import telemetry
from benchhub_runner.measure.telemetry import TelemetrySampler, client_bound, summarize

FIXTURES = Path(__file__).parent / "fixtures" / "sysinfo"
T0 = FIXTURES / "telemetry" / "t0" / "proc"
T1 = FIXTURES / "telemetry" / "t1" / "proc"
LIVE = FIXTURES / "live-kvm-docker"
E5 = FIXTURES / "e5-kvm-2socket"

needs_100_ticks = pytest.mark.skipif(
    telemetry.CLOCK_TICKS != 100, reason="fixture process times assume CLK_TCK 100"
)


@needs_100_ticks
def test_it_computes_exact_rates_from_two_snapshots():
    a = telemetry.take_snapshot(proc=T0, device="vda", pids={4242, 4244}, at=10.0)
    b = telemetry.take_snapshot(proc=T1, device="vda", pids={4242, 4243, 4245}, at=12.0)
    used = telemetry.client_ticks(a, b, first_seen_after=telemetry.uptime_s(proc=T0))

    sample = telemetry.make_sample(a, b, t=2.0, device="vda", client_ticks=used)

    assert sample == {
        "t": 2.0,
        "cpu_user_pct": 35.0,
        "cpu_system_pct": 12.5,
        "cpu_iowait_pct": 10.0,
        "cpu_idle_pct": 37.5,
        "cpu_steal_pct": 5.0,
        "ctx_switches_per_s": 2500.0,
        "interrupts_per_s": 1500.0,
        "procs_running": 7,
        "mem_used_bytes": (24684092 - 20000000) * 1024,
        "mem_cached_bytes": (897056 + 150000) * 1024,
        "disk_device": "vda",
        "disk_read_bytes_per_s": 2 * 2**20,
        "disk_write_bytes_per_s": 10 * 2**20,
        "disk_read_iops": 100.0,
        "disk_write_iops": 500.0,
        "disk_util_pct": 75.0,
        "client_cpu_pct": 90.0,
    }


def test_it_reads_process_stat_lines_with_odd_names():
    assert proctree.read_process(4244, proc=T0) == ((4244, 99000), 55)
    assert proctree.read_process(4244, proc=T1) is None  # exited


def test_it_finds_children_with_and_without_the_kernels_children_files():
    assert proctree.descendants({4242}, proc=T1, scan=False) == {4242, 4243}
    # t0 has no children files: only a scan of all parents finds 4244...
    assert proctree.descendants({4242}, proc=T0, scan=True) == {4242, 4244}
    # ...which the sampler allows only every few seconds.
    assert proctree.descendants({4242}, proc=T0, scan=False) == {4242}


def test_it_leaves_disk_fields_empty_without_a_device():
    a = telemetry.take_snapshot(proc=T0, device="", pids=set(), at=0.0)
    b = telemetry.take_snapshot(proc=T1, device="", pids=set(), at=1.0)

    sample = telemetry.make_sample(a, b, t=1.0, device="", client_ticks=0)

    assert sample["disk_device"] is None
    assert sample["disk_util_pct"] is None
    assert sample["client_cpu_pct"] == 0.0
    assert summarize([sample])["disk_util_pct_mean"] is None


def test_it_maps_the_data_dir_to_the_device_in_diskstats():
    def device(tree: Path, data_dir: str) -> str:
        return TelemetrySampler(
            data_dir=Path(data_dir), proc=tree / "proc", sys=tree / "sys"
        ).device

    assert device(LIVE, "/work/data") == "vda"
    # E5: the root is the partition vda1, watched as its disk; the data is on an LVM volume.
    assert device(E5, "/var/lib/postgresql/14/main") == "vda"
    assert device(E5, "/srv/pg data/14/main") == "dm-0"
    assert device(E5, "/proc") == ""


def test_it_keeps_what_it_sampled_when_sampling_breaks(monkeypatch):
    sampler = TelemetrySampler(interval_s=0.05)
    calls = []

    def flaky_snapshot(**kwargs):
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("unexpected /proc format")
        return real_snapshot(**kwargs)

    real_snapshot = telemetry.take_snapshot
    monkeypatch.setattr(telemetry, "take_snapshot", flaky_snapshot)
    with sampler:
        time.sleep(0.5)

    assert len(sampler.samples()) == 2
    assert sampler.samples()[0]["client_cpu_pct"] is None  # nothing was watched
    assert sampler.error


def test_it_summarizes_mean_and_max():
    samples = [
        {"t": 1.0, "cpu_iowait_pct": 10.0, "client_cpu_pct": 50.0, "disk_util_pct": None},
        {"t": 2.0, "cpu_iowait_pct": 30.0, "client_cpu_pct": 150.0, "disk_util_pct": None},
    ]

    summary = summarize(samples)

    assert summary["samples"] == 2
    assert (summary["cpu_iowait_pct_mean"], summary["cpu_iowait_pct_max"]) == (20.0, 30.0)
    assert (summary["client_cpu_pct_mean"], summary["client_cpu_pct_max"]) == (100.0, 150.0)
    assert summary["disk_util_pct_mean"] is None
    assert "t_mean" not in summary


def test_it_flags_a_client_whose_own_threads_are_saturated():
    def run(*pcts: float | None, idle: float = 60.0) -> list[dict]:
        return [{"client_cpu_pct": p, "cpu_idle_pct": idle} for p in pcts]

    # pgbench -j 2 at 190% of one core: each thread at 95% of its core, on a host 60% idle.
    assert client_bound(run(190, 190), client_threads=2)
    assert not client_bound(run(170, 170), client_threads=2)
    # The same 300% of one core is four saturated threads of -j 4, or eight half-busy of -j 8.
    assert client_bound(run(370, 370), client_threads=4)
    assert not client_bound(run(370, 370), client_threads=8)
    assert client_bound([], client_threads=2) is None
    assert client_bound(run(None), client_threads=2) is None
    assert client_bound(run(190), client_threads=None) is None


def test_it_flags_busy_client_threads_on_a_host_with_no_idle_cpu():
    def run(pct: float, idle: float) -> list[dict]:
        return [{"client_cpu_pct": pct, "cpu_idle_pct": idle}] * 3

    # -j 4 at 60% of a core a thread: busy, and the host had no idle core to give them.
    assert client_bound(run(240, idle=5.0), client_threads=4)
    assert not client_bound(run(240, idle=40.0), client_threads=4)
    # A quiet client on a saturated host: the server is what ran out of CPU.
    assert not client_bound(run(120, idle=2.0), client_threads=4)


# Busy for at least `seconds`, and on until it has had `cpu` seconds of CPU (at most `cap`): on a
# loaded machine a fixed wall time can leave the loop a tenth of a core, too little to compare.
BUSY = (
    "import time\nstart = time.monotonic()\n"
    "while (time.monotonic() < start + {seconds} or time.process_time() < {cpu})"
    " and time.monotonic() < start + {cap}: pass\n"
)


def write_and_fsync(directory: Path, *, mib: int) -> None:
    with open(directory / "telemetry-test.bin", "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(2**20))
            f.flush()
            os.fsync(f.fileno())


def test_it_sees_a_busy_child_and_fsynced_writes_live(tmp_path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with TelemetrySampler(data_dir=tmp_path, interval_s=0.5) as sampler:
        # The shell forks the busy loop (the trailing command stops it from exec-ing), so the
        # CPU shows up only if the sampler follows the watched process's children.
        busy = BUSY.format(seconds=3, cpu=1.0, cap=20)
        started = time.monotonic()
        shell = subprocess.Popen(["sh", "-c", f'{sys.executable} -c "{busy}"; :'])
        sampler.watch(shell.pid)
        write_and_fsync(tmp_path, mib=16)
        shell.wait(timeout=30)
        busy_s = time.monotonic() - started
        time.sleep(0.6)
    samples = sampler.samples()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Reaped grandchildren count in RUSAGE_CHILDREN too: this is what the busy loop really used.
    child_cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    seen_cpu_s = sum(s["client_cpu_pct"] for s in samples) / 100 * 0.5

    print(f"busy child used {child_cpu_s:.2f} s CPU, the sampler saw {seen_cpu_s:.2f} s")
    for s in samples:
        print({k: s[k] for k in ("t", "client_cpu_pct", "disk_write_bytes_per_s", "cpu_user_pct")})
    assert len(samples) >= 6
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    # A 2-vCPU VM shares its cores with the writer and with neighbours, so the child may get
    # well under a core; but whatever it got must be what the sampler saw, less at most the
    # last interval, which an exiting process takes with it.
    assert child_cpu_s > 0.5
    assert child_cpu_s - 0.55 <= seen_cpu_s <= child_cpu_s * 1.05 + 0.05
    # Near 100 on an idle machine; under load, at least the child's average share of a core.
    assert max(s["client_cpu_pct"] for s in samples) >= 0.8 * 100 * child_cpu_s / busy_s
    assert samples[-1]["client_cpu_pct"] < 20  # the child has gone
    if sampler.device:
        assert sum(s["disk_write_bytes_per_s"] for s in samples) * 0.5 >= 8 * 2**20
    for s in samples:
        total = s["cpu_user_pct"] + s["cpu_system_pct"] + s["cpu_iowait_pct"] + s["cpu_idle_pct"]
        assert total + s["cpu_steal_pct"] <= 100.5


def test_it_costs_well_under_two_percent_of_a_core(tmp_path):
    with TelemetrySampler(data_dir=tmp_path, interval_s=1.0) as sampler:
        sampler.watch(os.getpid())
        time.sleep(5.2)
    cpu_share = sampler.thread_cpu_s / 5.2

    print(f"sampler thread: {sampler.thread_cpu_s * 1000:.1f} ms CPU in 5.2 s ({cpu_share:.3%})")
    assert len(sampler.samples()) == 5
    # This process ran pytest's start-up long before watch(); none of that may count, and it
    # sleeps throughout.
    assert all(s["client_cpu_pct"] < 20 for s in sampler.samples())
    assert sampler.thread_cpu_s > 0
    assert cpu_share < 0.02
