"""`make load --quick` end to end, one gunicorn and the scaled-out site: agents and readers for
20 s, no error, no lost result."""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_load(tmp_path: Path, *flags: str) -> dict:
    """`bench.load --quick` in a database of its own; its report, once it passed its checks:
    no error (5xx or connection), no accepted upload lost, every done job with its one run."""
    output = tmp_path / "load.json"
    base = os.environ["DATABASE_URL"]
    database = f"{urlsplit(base).path.lstrip('/') or 'benchhub'}_load_quick"
    argv = [sys.executable, "-m", "bench.load", "--quick", *flags, "--database", database,
            "--output", str(output)]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(output.read_text())
    figures = {f["name"]: f["value"] for f in report["figures"]}
    assert figures["errors (5xx, connection)"] == 0
    assert figures["accepted uploads not stored"] == 0
    assert figures["jobs done without exactly one run"] == 0
    assert figures["uploads accepted"] > 0 and figures["jobs done"] > 0
    requests = report["options"]["details"]["requests"]
    assert {"claim", "upload", "home page", "status API", "compare page", "run page",
            "experiments page"} <= set(requests)  # fmt: skip
    return report


@pytest.mark.slow
def test_it_loses_no_result_and_answers_every_request_under_load(tmp_path):
    report = run_load(tmp_path)
    assert report["options"]["shape"] == "single"


@pytest.mark.slow
def test_it_loses_no_result_through_balancer_workers_pooler_and_replica(tmp_path):
    """`make load LOAD_ARGS="--quick --scale-out"`: the quick load (20 s) through haproxy (the
    deployed config), two gunicorns, an ingest and an analysis worker, pgbouncer in transaction
    mode and a streaming replica, every one a real process (bench/scaleout.py).

    Slow (232 s on the shared 2-CPU machine at load average 12, of which 120 to 140 s start
    the chain: initdb, migrate, pg_basebackup, every process answering): only this runs the
    whole scaled-out chain at once, so only it shows that an upload accepted by one web process
    behind the balancer and written through the pooler is stored exactly once, that no request
    fails while reads go to the replica, and that both web processes and both workers did
    their share."""
    report = run_load(tmp_path, "--scale-out")
    figures = {f["name"]: f["value"] for f in report["figures"]}
    assert figures["runs stored - uploads answered 201"] == 0
    assert figures["results stored - results of the runs"] == 0
    assert figures["runs the workers left unaggregated"] == 0
    assert figures["tasks left in the workers' queues"] == 0
    chain = report["options"]["details"]["scale_out"]
    assert set(chain["served_by"]) == {"web1", "web2"}
    assert chain["replica_transactions"] > 0
    assert chain["pgbouncer"]["total_xact_count"] > 0
