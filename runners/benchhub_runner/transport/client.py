"""The HTTP client of the agent: JSON over HTTP(S) with the runner token, retried with backoff.

Retried: connection failures, timeouts, and responses 408, 429 and 5xx (honouring Retry-After).
Not retried: other 4xx, which mean the request itself is wrong or stale; they raise ApiError with
the server's error body, whose `fields` name what was wrong.

Redirects are followed as urllib follows them, but the token only to the same origin (scheme,
host and port): urllib's own handler copies the Authorization header to wherever the answer
points, so a server (or a proxy in front of it) answering with a redirect elsewhere would hand
the token to that host.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int] | None:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        return None
    return scheme, (parts.hostname or ""), port


class _TokenStaysHome(urllib.request.HTTPRedirectHandler):
    """urllib's redirects, minus the Authorization header on a redirect to another origin."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        here = _origin(req.full_url)
        if new is not None and (here is None or _origin(new.full_url) != here):
            new.remove_header("Authorization")
        return new


# The agent's and the CLI's one way to send a request (environment proxies as urlopen has them).
opener = urllib.request.build_opener(_TokenStaysHome)


class ApiError(Exception):
    """The server refused the request (a 4xx other than 408/429)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{status} {body.get('error', '')}: {body.get('detail', body)}")


class Unreachable(Exception):
    """The server could not be reached (or kept failing) within the allowed attempts.

    `status` is the last HTTP status when the server did answer (a 5xx, 408 or 429) and None
    when it could not be reached at all; `body` is that answer's JSON (or its first bytes).
    """

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass
class Response:
    status: int
    body: Any


class Client:
    def __init__(
        self,
        *,
        server: str,
        token: str,
        timeout_s: float = 30.0,
        attempts: int = 5,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
    ) -> None:
        if not server.startswith(("http://", "https://")):
            raise ValueError(f"server must be an http:// or https:// URL, not {server!r}")
        self.server = server.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s

    def request(
        self, method: str, path: str, body: Any = None, *, attempts: int | None = None
    ) -> Response:
        """Send one request, retrying transient failures; raises ApiError or Unreachable."""
        data = json.dumps(body).encode() if body is not None else None
        retry_after, problem = "", ""
        status: int | None = None
        answer: Any = None
        for attempt in range(attempts or self.attempts):
            if attempt:
                time.sleep(self._delay(attempt, retry_after))
            try:
                return self._send(method, path, data)
            except urllib.error.HTTPError as exc:
                payload = _json(exc.read())
                if exc.code not in RETRY_STATUS:
                    raise ApiError(exc.code, payload if isinstance(payload, dict) else {}) from None
                retry_after = exc.headers.get("Retry-After", "") if exc.headers else ""
                problem, status, answer = f"HTTP {exc.code}", exc.code, payload
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                retry_after, problem = "", str(getattr(exc, "reason", exc))
                status, answer = None, None
        raise Unreachable(
            f"{method} {self.server}{path} failed after "
            f"{attempts or self.attempts} attempts: {problem}",
            status=status,
            body=answer,
        )

    def _send(self, method: str, path: str, data: bytes | None) -> Response:
        request = urllib.request.Request(  # noqa: S310 - scheme checked in __init__
            f"{self.server}{path}",
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": "benchhub-runner",
            },
        )
        # The scheme is checked in __init__: only http and https reach the opener.
        with opener.open(request, timeout=self.timeout_s) as response:
            return Response(status=response.status, body=_json(response.read()))

    def _delay(self, attempt: int, retry_after: str) -> float:
        if retry_after.isdigit():
            return min(float(retry_after), self.backoff_max_s)
        # Full jitter, so a fleet of agents coming back together does not stampede the server.
        return random.uniform(0, min(self.backoff_max_s, self.backoff_s * 2**attempt))  # noqa: S311

    def claim(
        self, *, tablespaces: list[str] | None = None, tags: list[str] | None = None
    ) -> object | None:
        """The claimed job's JSON as sent (jobspec.job_parse reads it), or None: no work.
        `tablespaces`: the names this host offers; only jobs using none other are given.
        `tags`: this host's tags, which the server stores on the host; only jobs requiring none
        other are given. None leaves the host's tags as the server has them; [] clears them."""
        body: dict[str, Any] = {"tablespaces": tablespaces} if tablespaces else {}
        if tags is not None:
            body["tags"] = tags
        response = self.request("POST", "/api/v1/jobs/claim/", body or None)
        return None if response.status == 204 else response.body

    def heartbeat(self, job_id: int, progress: dict[str, Any]) -> dict[str, Any]:
        stage = progress.get("stage")
        if isinstance(stage, str) and len(stage) > STAGE_MAX:
            progress = {**progress, "stage": _cut(stage)}
        return _object(
            self.request(
                "POST", f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": progress}, attempts=1
            ).body
        )

    def finish(self, job_id: int, *, outcome: str, stage: str = "", message: str = "") -> None:
        self.request(
            "POST",
            f"/api/v1/jobs/{job_id}/finish/",
            {"outcome": outcome, "stage": _cut(stage), "message": message[:20000]},
        )

    def bisect_range(
        self, job_id: int, *, attempt: int, good: str, bad: str, commits: list[dict[str, Any]]
    ) -> None:
        """A bisection's listing job: the range it found (docs/runner-api.md)."""
        self.request(
            "POST",
            f"/api/v1/jobs/{job_id}/range/",
            {"attempt": attempt, "good": good, "bad": bad, "commits": commits},
        )

    def release(self, job_id: int, reason: str) -> None:
        self.request(
            "POST", f"/api/v1/jobs/{job_id}/release/", {"reason": reason[:2000]}, attempts=2
        )

    def upload(self, payload: dict[str, Any], *, attempts: int | None = None) -> dict[str, Any]:
        """Send one run (`POST /api/v1/runs/`): the spool and imports both upload through here.
        Returns the stored run as the server answers it, or {} for an answer not a JSON object."""
        return _object(self.request("POST", "/api/v1/runs/", payload, attempts=attempts).body)

    def spool_report(self, set_aside: list[dict[str, Any]]) -> None:
        """Tell the server which runs this host's spool has set aside (replaces the last list)."""
        self.request("POST", "/api/v1/hosts/spool/", {"set_aside": set_aside}, attempts=2)


def _object(body: Any) -> dict[str, Any]:
    # A reply that is not a JSON object (a proxy's page) carries nothing the agent reads.
    return body if isinstance(body, dict) else {}


def _json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"detail": raw[:500].decode(errors="replace")}


# The server keeps a job's stage in a 50-character column and refuses a longer one; a stage
# names a version (`level c=5000 repeat=10 version=<recipe name>`), which can be longer. The
# full text is in the heartbeat's other fields and in the failure message.
STAGE_MAX = 50


def _cut(stage: str) -> str:
    return stage if len(stage) <= STAGE_MAX else stage[: STAGE_MAX - 1] + "…"
