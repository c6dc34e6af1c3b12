"""Latency percentiles from pgbench's per-transaction log: a real pgbench 18 writes a full log
against a prebuilt server, and the percentiles of a sample of it (each transaction kept with the
same probability, as --sampling-rate keeps them) agree with those of the whole log."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchhub_runner import pgbench
from benchhub_runner.cluster import Cluster, free_port
from benchhub_runner.evidence import latency, sampling_rate

ABOVE = 200


@pytest.fixture(scope="module")
def full_log(prebuilt, client_bindir: Path, tmp_path_factory) -> Iterator[list[Path]]:
    """The log files of one 3 s select-only run with every transaction logged."""
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
            clients=2, threads=2, duration_s=3, builtin="select-only", log_prefix=logs / "full"
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


def test_it_agrees_with_the_full_log_from_a_sample_of_it(full_log, tmp_path):
    every = latency.read_latencies(full_log)
    full = latency.summary(every, sampling_rate=1.0)
    assert full is not None and len(every) > 5000
    lines = [line for path in full_log for line in path.read_text().splitlines()]
    for key, percent in latency.PERCENTILES.items():
        # A sample pins a percentile when enough of it lies above: the agent's rates keep
        # ~100000 lines, 100 above the p99.9. A 3 s run is smaller, so each percentile gets
        # the rate that keeps ABOVE lines beyond it (0.1 at least), as a larger run would.
        rate = max(0.1, ABOVE / (len(every) * (100 - percent) / 100))
        if rate >= 1.0:
            continue  # the run is too short to sample for this percentile
        # What --sampling-rate writes: each transaction's line kept with that probability.
        rng = random.Random(14)
        sampled_file = tmp_path / f"sampled-{key}.1"
        sampled_file.write_text("".join(f"{line}\n" for line in lines if rng.random() < rate))
        sampled = latency.summary(latency.read_latencies([sampled_file]), sampling_rate=rate)

        assert sampled is not None
        assert sampled["transactions"] == pytest.approx(len(every) * rate, rel=0.1)
        assert sampled[key] == pytest.approx(full[key], rel=0.05), (key, rate)
    assert len(every) * 0.1 >= ABOVE / 0.1, "the median and p90 were sampled at 0.1"


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
