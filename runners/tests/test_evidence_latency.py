"""Latency percentiles from pgbench's per-transaction log: a real pgbench 18 writes a full log
against a prebuilt server, and the percentiles of a sample of it (each transaction kept with the
same probability, as --sampling-rate keeps them) agree with those of the whole log."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchhub_runner.evidence import latency, sampling_rate
from benchhub_runner.measure import pgbench
from benchhub_runner.servers.cluster import Cluster, free_port

# Lines of a sample above a tail percentile it estimates: the agent's rates keep ~100 000 lines,
# 100 above the p99.9.
ABOVE = 100


@pytest.fixture(scope="module")
def full_log(prebuilt, client_bindir: Path, tmp_path_factory) -> Iterator[list[Path]]:
    """The log files of one 5 s select-only run with every transaction logged."""
    from conftest import open_tmpdir  # the runner tests' helper, for a server-reachable dir

    work = open_tmpdir("benchhub-latency-")
    cluster = Cluster(
        installation=prebuilt("18"), client_bindir=client_bindir, workdir=work, port=free_port()
    )
    with cluster:
        target = pgbench.Target(host=str(cluster.socket_dir), port=cluster.port)
        init = pgbench.init_argv(bindir=client_bindir, target=target, scale=1)
        assert pgbench.Process(init, account=cluster.account, cwd=work).wait(60).returncode == 0
        logs = work / "logs"
        logs.mkdir()
        if cluster.account is not None:
            import os

            os.chown(logs, cluster.account.uid, cluster.account.gid)
        measurement = pgbench.Measurement(
            clients=2, threads=2, duration_s=5, builtin="select-only", log_prefix=logs / "full"
        )
        args = pgbench.argv(bindir=client_bindir, target=target, m=measurement, version=(18, 0))
        done = pgbench.Process(args, account=cluster.account, cwd=work).wait(60)
        assert done.returncode == 0, done.output
        # One file per thread: <prefix>.<pid> and <prefix>.<pid>.1
        yield latency.log_files(logs)
    import shutil

    shutil.rmtree(work, ignore_errors=True)


def test_it_reads_one_log_file_per_pgbench_thread(full_log):
    assert len(full_log) == 2
    assert all(len(path.read_text().splitlines()[0].split()) == 6 for path in full_log)


def _sample(lines: list[str], rate: float, path: Path) -> dict[str, Any]:
    """What --sampling-rate writes: each transaction's line kept with that probability."""
    rng = random.Random(14)
    path.write_text("".join(f"{line}\n" for line in lines if rng.random() < rate))
    sampled = latency.summary(latency.read_latencies([path]), sampling_rate=rate)
    assert sampled is not None
    return sampled


def _within_sampling_error(every: list[float], value: float, percent: float, n: int) -> tuple:
    """Where a sampled percentile falls in the full, sorted log: its rank (with the log's
    microsecond resolution either side) must come within four standard errors of the percentile.
    A relative bound on the latency itself fails by chance on a loaded machine, where the
    distribution is flat around the percentile and a small shift of rank moves the value far."""
    q = percent / 100
    error = 4 * math.sqrt(q * (1 - q) / n)
    low = bisect.bisect_left(every, value - 0.0005) / len(every)
    high = bisect.bisect_right(every, value + 0.0005) / len(every)
    return low - error <= q <= high + error, (percent, low, high, error)


def test_it_agrees_with_the_full_log_from_a_sample_of_it(full_log, tmp_path):
    every = sorted(latency.read_latencies(full_log))
    assert len(every) > 20_000
    lines = [line for path in full_log for line in path.read_text().splitlines()]

    # The median and p90 from a tenth of the log, the rate of a level's first measurement.
    sampled = _sample(lines, 0.1, tmp_path / "sampled.1")
    assert sampled["transactions"] == pytest.approx(len(every) * 0.1, rel=0.1)
    for key, percent in (("p50_ms", 50.0), ("p90_ms", 90.0)):
        agrees, where = _within_sampling_error(
            every, sampled[key], percent, sampled["transactions"]
        )
        assert agrees, (key, where)


def test_it_pins_the_tail_percentiles_by_rank_from_a_sample(full_log, tmp_path):
    """The tail is sampled as densely as the agent's rates make it (~100 lines above the
    p99.9) and held to the same rank bound as the median."""
    every = sorted(latency.read_latencies(full_log))
    lines = [line for path in full_log for line in path.read_text().splitlines()]
    for key, percent in (("p99_ms", 99.0), ("p999_ms", 99.9)):
        rate = ABOVE / (len(every) * (100 - percent) / 100)
        if rate >= 1.0:
            continue  # too short a run to sample for this percentile
        sampled = _sample(lines, rate, tmp_path / f"sampled-{key}.1")
        agrees, where = _within_sampling_error(
            every, sampled[key], percent, sampled["transactions"]
        )
        assert agrees, (key, rate, where)


def test_it_takes_percentiles_by_nearest_rank():
    values = [float(v) for v in range(1, 1001)]  # 1 .. 1000 ms
    summary = latency.summary(reversed(values), sampling_rate=1.0)

    assert summary is not None
    assert (summary["p50_ms"], summary["p90_ms"], summary["p99_ms"]) == (500.0, 900.0, 990.0)
    assert (summary["p999_ms"], summary["max_ms"]) == (999.0, 1000.0)
    assert latency.nearest_rank([3.0], 99.9) == 3.0


def test_it_counts_every_transaction_into_a_bounded_histogram():
    values = [0.1 * 1.003**i for i in range(2000)]  # 0.1 ms to 40 ms
    histogram = latency.histogram(sorted(values))

    assert len(histogram["counts"]) == latency.MAX_BINS
    assert len(histogram["edges_ms"]) == latency.MAX_BINS + 1
    assert sum(histogram["counts"]) == 2000
    assert histogram["edges_ms"] == sorted(histogram["edges_ms"])
    assert histogram["edges_ms"][0] <= min(values) and histogram["edges_ms"][-1] >= max(values)
    # Evenly spread on a log scale: every bin holds about the same number.
    assert max(histogram["counts"]) - min(histogram["counts"]) <= 2


def test_it_skips_transactions_that_did_not_complete(tmp_path):
    log = tmp_path / "log.1"
    log.write_text(
        "0 1 1460 0 1795263760 407479\n"
        "1 2 skipped 0 1795263765 485568 0\n"
        "4 1 failed 0 1795263773 605069\n"
        "1 1 1642 0 1795263765 485554 96\n"
    )
    assert list(latency.read_latencies([log])) == [1.46, 1.642]


@pytest.mark.parametrize(
    ("expected", "rate"),
    [(None, 0.1), (1_000, 1.0), (1_000_000, 0.1), (50_000_000, 0.002), (1e12, 0.0001)],
)
def test_it_samples_the_log_down_to_about_a_hundred_thousand_lines(expected, rate):
    assert sampling_rate(expected) == rate
