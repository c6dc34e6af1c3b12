"""Twenty readers of the largest run a server takes keep `/healthz` answering within a second.

The run holds MAX_RUN_SAMPLES per-second samples (two results of MAX_PROGRESS) in an upload
under the body's byte limit. Its page draws
at most MAX_CHART_POINTS points a line and the results API sends SAMPLE_PAGE_MAX samples a page,
so each read is bounded; gunicorn runs as the deployments run it (benchhub/gunicorn_conf.py:
workers of 8 threads, a connection taken only by a worker with a thread free for it).
"""

import json
import statistics
import time

import numpy
import pytest
import requests

from benchhub.hosts.services import runner_token_create
from benchhub.results.serializers import MAX_RUN_SAMPLES
from benchhub.testing import processes
from benchhub.testing.healthz_load import healthz_under_readers
from benchhub.testing.payloads import run_payload

READERS = 20
LOAD_S = 30.0


@pytest.fixture
def web_with_the_largest_run(transactional_db):
    """gunicorn on the test database and a run of MAX_RUN_SAMPLES samples, uploaded through
    the API as an agent does."""
    # As `make up` and Kubernetes run it: 3 workers of 8 threads, more threads than readers.
    # With fewer, every thread is reading and a probe waits for one to end (docs/security.md).
    web = processes.Gunicorn(queue=processes.unique_queue(), workers=READERS // 8 + 1)
    try:
        web.start()
        _, token = runner_token_create(host_name="bench-01")
        payload = run_payload(clients=(1, 2), repeats=1)
        for row in payload["results"]:
            # The fields a sample needs, so the run fits the upload's byte limit too.
            row["progress"] = [
                {"t": t, "tps": row["tps"] + t % 7, "latency_ms": 1.5}
                for t in range(1, MAX_RUN_SAMPLES // len(payload["results"]) + 1)
            ]
        body = json.dumps(payload, separators=(",", ":"))
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        sent = requests.post(f"{web.url}/api/v1/runs/", data=body, headers=headers, timeout=300)
        assert sent.status_code == 201, sent.text[:500]
        yield web.url, payload["run_uuid"]
    finally:
        web.stop()


# Alone: its latency bound is for the readers' load, not for that plus another test's.
@pytest.mark.slow
@pytest.mark.alone
def test_it_answers_healthz_within_a_second_while_20_readers_read_the_largest_run(
    web_with_the_largest_run,
):
    """Only this proves the bound holds for the service as a whole (the bounds of each read are
    proved by the fast tests of the run page and the API); it takes about a minute."""
    url, run = web_with_the_largest_run
    reads = [f"{url}/runs/{run}/", f"{url}/api/v1/runs/{run}/results/?progress=true"]
    started = time.monotonic()
    first = requests.get(reads[1], timeout=300).json()
    print(f"first API page alone: {time.monotonic() - started:.3f} s")
    assert first["count"] == MAX_RUN_SAMPLES and first["next"]
    load = healthz_under_readers(url, reads, readers=READERS, seconds=LOAD_S, give_up_s=10)

    probes = load.probes_s
    page_s = [read.seconds for read in load.reads if "/api/" not in read.url] or [float("nan")]
    api_s = load.reads_s(containing="/api/") or [float("nan")]
    # The nearest rank above: a failed probe (inf) stays inf rather than an interpolated nan.
    p95 = float(numpy.percentile(probes, 95, method="higher"))
    print(
        f"healthz over {len(probes)} probes: median {statistics.median(probes):.3f} s, "
        f"p95 {p95:.3f} s, max {max(probes):.3f} s; "
        f"{len(page_s)} run pages (median {statistics.median(page_s):.3f} s), "
        f"{len(api_s)} API pages (median {statistics.median(api_s):.3f} s); "
        f"answers {sorted(load.statuses)}"
    )
    assert load.statuses == {200}
    assert statistics.median(probes) < 1.0
    assert p95 < 1.0
