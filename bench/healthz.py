"""`/healthz` while twenty readers read the largest import the server accepts.

    python -m bench.healthz [--rounds 5] [--seconds 30] [--readers 20]

Stores one import of nested quote lines as large as the request bound lets it be (the shape
that made a 21 MB run page of a 4.6 MB import), then, in each round, has `--readers` threads
read its run page and its API answer without pause while `/healthz` is probed every 0.25 s.
gunicorn runs as `make up` runs it (3 workers of 8 threads). Prints each round and the median
and p95 of the probes with their bootstrap intervals over rounds (bench.intervals), the sizes
of the two reads, and the verdict on the target (p95 under 1 s). Its own database
(`benchhub_bench_healthz`), never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from bench.env import WebServer, bench_prepare, redis_queue_clear
from bench.intervals import Interval, percentile_interval, verdict
from benchhub.testing.healthz_load import Load, healthz_under_readers

TARGET_S = 1.0


def import_store() -> str:
    """The largest accepted import, stored through the import service; its run's uuid."""
    from django.conf import settings
    from django.contrib.auth.models import User

    from benchhub.results.imports import run_import_outputs
    from benchhub.testing.quoted import largest_import_texts

    texts = largest_import_texts()
    outputs = [{"text": text} for text in texts]
    body = json.dumps({"host": "old-box", "version": "15.4", "outputs": outputs})
    assert len(body) < settings.MAX_UPLOAD_BYTES, "the import would not be accepted"
    user, _ = User.objects.get_or_create(username="bench-importer")
    named = [(f"output {n}", text) for n, text in enumerate(texts)]
    run = run_import_outputs(
        texts=named, version="15.4", host="old-box", config_text="", lscpu="",
        note="bench.healthz", user=user,
    )  # fmt: skip
    chars = sum(len(text) for text in texts)
    print(
        f"import: {len(texts)} outputs, {chars:,} characters of nested quote lines "
        f"(body {len(body):,} bytes)"
    )
    return str(run.uuid)


def shown(name: str, interval: Interval) -> str:
    low = "?" if interval.low is None else f"{interval.low:.3f}"
    high = "?" if interval.high is None else f"{interval.high:.3f}"
    return f"{name} {interval.value:.3f} s [{low}, {high}] ({interval.method})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--database", default="benchhub_bench_healthz")
    args = parser.parse_args()
    bench_prepare(os.environ["DATABASE_URL"], args.database)
    run_uuid = import_store()
    log = Path(tempfile.mkdtemp(prefix="bench-healthz-")) / "gunicorn.log"
    rounds: list[Load] = []
    with WebServer(workers=3, threads=8, log=log) as web:
        import requests

        reads = [f"{web.url}/runs/{run_uuid}/", f"{web.url}/api/v1/runs/{run_uuid}/"]
        for read in reads:
            size = len(requests.get(read, timeout=120).content)
            print(f"{read.removeprefix(web.url)}: {size:,} bytes")
        for n in range(args.rounds):
            one = healthz_under_readers(web.url, reads, readers=args.readers, seconds=args.seconds)
            rounds.append(one)
            print(
                f"round {n + 1}: healthz median {statistics.median(one.probes_s):.3f} s, "
                f"max {max(one.probes_s):.3f} s over {len(one.probes_s)} probes; "
                f"{len(one.reads)} reads, median {statistics.median(one.reads_s()):.3f} s; "
                f"answers {sorted(one.statuses)}",
                flush=True,
            )
    redis_queue_clear()
    probes = [r.probes_s for r in rounds]
    median = percentile_interval(rounds=probes, q=50)
    p95 = percentile_interval(rounds=probes, q=95)
    print(shown("healthz median", median))
    print(shown("healthz p95", p95))
    if p95.low is not None and p95.high is not None:
        met = verdict(low=p95.low, high=p95.high, op="<=", target=TARGET_S)
        print(f"target p95 <= {TARGET_S} s: {met}")


if __name__ == "__main__":
    main()
