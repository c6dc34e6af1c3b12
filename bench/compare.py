"""Comparison at scale: the compare API and page, a series' history and the run list, with a
repository of many results (bench.history).

Latency is measured over HTTP against gunicorn (sequential requests after a warm-up, so it is
the cost of one request, not queueing). The number of SQL queries is counted in this process
with django.test.Client under CaptureQueriesContext, on the same URLs: the server code is the
same, and no bench-only hook has to live in the product.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from bench.client import request
from bench.figures import Figure, percentile
from bench.history import HOSTS, history_ensure

TARGET_P95_MS = 100.0


@dataclass(frozen=True)
class CompareOptions:
    results: int
    requests: int  # per endpoint, after one warm-up


def _series() -> tuple[str, str, list[str]]:
    """A busy series: host, workload and the two versions with the most runs in it."""
    from django.db.models import Count

    from benchhub.results.models import Run

    host, workload = "hist-00", "tpcb-like"
    top = (
        Run.objects.filter(host__name=host, workload__name=workload)
        .values_list("build__version")
        .annotate(n=Count("id"))
        .order_by("-n", "build__version")[:2]
    )
    return host, workload, sorted(v for v, _ in top)


def endpoints() -> dict[str, str]:
    host, workload, versions = _series()
    compare = urlencode({"workload": workload, "host": host, "versions": ",".join(versions)})
    history = urlencode({"host": host, "workload": workload, "clients": 32})
    return {
        "compare API": f"/api/v1/compare/?{compare}",
        "compare page": f"/compare/?{compare}",
        "history page": f"/history/?{history}",
        "run list API": "/api/v1/runs/",
        "run list API, one host": f"/api/v1/runs/?{urlencode({'host': host})}",
    }


def query_count(path: str) -> int:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.get(path, HTTP_HOST="127.0.0.1")  # the same warm-up as over HTTP
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, HTTP_HOST="127.0.0.1")
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}")
    return len(queries.captured_queries)


def latencies(server: str, path: str, requests: int) -> list[float]:
    request(server + path)
    times = []
    for _ in range(requests):
        reply = request(server + path)
        if reply.status != 200:
            raise RuntimeError(f"{path} answered {reply.status}: {reply.body[:300]!r}")
        times.append(reply.elapsed_ms)
    return times


def compare_bench(*, server: str, database_url: str, options: CompareOptions) -> list[Figure]:
    shape = history_ensure(results=options.results)
    scale = f"{shape.results:,} results"
    figures = [
        Figure("compare", "history size", shape.results, "results",
               note=f"{shape.runs:,} runs on {HOSTS} hosts, "
                    f"{shape.progress_samples:,} progress samples"),
    ]  # fmt: skip
    if shape.seconds:
        figures.append(Figure("compare", "history generation", shape.seconds, "s"))
    for name, path in endpoints().items():
        times = latencies(server, path, options.requests)
        figures += [
            Figure("compare", f"{name} p50", percentile(times, 50), "ms", note=scale),
            Figure("compare", f"{name} p95", percentile(times, 95), "ms",
                   op="<=", target=TARGET_P95_MS, note=path),
            Figure("compare", f"{name} queries", query_count(path), "queries"),
        ]  # fmt: skip
    return figures
