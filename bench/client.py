"""A minimal HTTP client for the bench: one connection per request (gunicorn's sync workers
close them anyway), timing in milliseconds around the whole round trip."""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    status: int
    body: bytes
    elapsed_ms: float
    server_ms: float | None = None  # the response's Server-Timing "app" duration

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def request(
    url: str, *, method: str = "GET", body: bytes | None = None, token: str = "", timeout=60.0
) -> Reply:
    parts = urlsplit(url)
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    started = time.perf_counter()
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    elapsed_ms = (time.perf_counter() - started) * 1000
    return Reply(
        response.status, data, elapsed_ms, server_timing(response.getheader("Server-Timing"))
    )


def server_timing(header: str | None) -> float | None:
    """The "app" metric's duration in a Server-Timing header (`app;dur=12.3`), or None."""
    for metric in (header or "").split(","):
        name, *params = (part.strip() for part in metric.split(";"))
        if name == "app":
            for param in params:
                key, _, value = param.partition("=")
                if key.strip() == "dur":
                    try:
                        return float(value)
                    except ValueError:
                        return None
    return None


def post_json(url: str, data: Any, *, token: str) -> Reply:
    return request(url, method="POST", body=json.dumps(data).encode(), token=token)
