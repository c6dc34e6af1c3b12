"""Request latencies, for Prometheus (/metrics) and for each response's caller (Server-Timing).

The middleware comes first: it times everything after it, and answers /metrics before host
validation and the TLS redirect, because Prometheus reaches each web replica by its address
(which ALLOWED_HOSTS does not list) over plain HTTP. /metrics builds no URL from the Host
header, so skipping that check exposes nothing; the bearer token guards it instead.
"""

import hmac
import os
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Histogram,
    generate_latest,
    multiprocess,
)

from benchhub.monitoring.collectors import StateCollector

METRICS_PATH = "/metrics"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
REQUEST_SECONDS = Histogram(
    "benchhub_http_request_duration_seconds",
    "Time from the first middleware to the response, by URL pattern, method and status.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


def metrics_registry() -> CollectorRegistry:
    """The request histogram (every process of this server's when PROMETHEUS_MULTIPROC_DIR
    names a directory they share, otherwise this process's alone) and the site's state."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(REQUEST_SECONDS)
    registry.register(StateCollector())
    return registry


def metrics_response(request: HttpRequest) -> HttpResponse:
    """404 unless BENCHHUB_METRICS_TOKEN is set; 401 without that token as a bearer token."""
    token = settings.BENCHHUB_METRICS_TOKEN
    if not token:
        return HttpResponse("Not found.\n", status=404, content_type="text/plain")
    supplied = request.headers.get("Authorization", "").encode()
    if not hmac.compare_digest(supplied, f"Bearer {token}".encode()):
        response = HttpResponse("A bearer token is required.\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    return HttpResponse(generate_latest(metrics_registry()), content_type=CONTENT_TYPE_LATEST)


class MetricsMiddleware:
    """Observes each request's duration under its URL pattern (not its path: one series per
    route, whatever the ids), and serves /metrics."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == METRICS_PATH:
            return metrics_response(request)
        start = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        elapsed = time.perf_counter() - start
        REQUEST_SECONDS.labels(
            route=match.route if match else "unmatched",
            method=request.method if request.method in METHODS else "other",
            status=str(response.status_code),
        ).observe(elapsed)
        # The same time for the client (W3C Server-Timing, shown by browsers' developer tools):
        # what a request spent in Django, against what its caller waited, tells the server's
        # work from the wait for a worker (the bench's claim figures report both).
        response["Server-Timing"] = f"app;dur={elapsed * 1000:.1f}"
        return response
