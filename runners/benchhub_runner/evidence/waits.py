"""Wait events during a measurement: pg_stat_activity sampled from a connection of its own.

One psql, started before the measurement and fed over its stdin, keeps one connection open for
the whole measurement (no connection per sample, which would itself show up as load); every
`interval_s` it runs a prepared statement that counts the active client backends per wait event,
and answers with a marker line so the reader knows where each round ends. The sampler's own
backend, background processes and idle connections are left out. A backend that is active and
waits on nothing is counted as "CPU" (it runs, or does I/O the server does not report).
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from typing import Any

from ..servers.cluster import Cluster, ClusterError

logger = logging.getLogger(__name__)

INTERVAL_S = 0.2
MAX_EVENTS = 50
MARKER = "@@benchhub-round"
START_TIMEOUT_S = 30.0


def waits_query(version_num: int) -> str:
    """The sampling statement; backend_type arrived in 10, wait events in 9.6."""
    client_only = " AND backend_type = 'client backend'" if version_num >= 100000 else ""
    event = "coalesce(wait_event_type || ':' || wait_event, 'CPU')"
    where = f"state = 'active' AND pid <> pg_backend_pid(){client_only}"
    return f"SELECT {event}, count(*) FROM pg_catalog.pg_stat_activity WHERE {where} GROUP BY 1"  # noqa: S608


def shares(counts: dict[str, int], *, limit: int = MAX_EVENTS) -> dict[str, float]:
    """Each event's share of all backend samples, largest first; past `limit` events the
    smallest are folded into "other"."""
    total = sum(counts.values())
    if total == 0:
        return {}
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if len(ranked) > limit:
        rest = sum(n for _, n in ranked[limit - 1 :])
        ranked = [*ranked[: limit - 1], ("other", rest)]
    return {event: round(n / total, 4) for event, n in ranked}


class WaitSampler:
    """Samples wait events from `start()` until `stop()`, which returns the evidence's `waits`.

    start() returns once the connection answers, so the first round is not delayed into the
    measurement; a sampler whose psql fails records why (`error`) and stops sampling.
    """

    def __init__(
        self,
        *,
        cluster: Cluster,
        version_num: int,
        interval_s: float = INTERVAL_S,
        untracked: str = "",
    ) -> None:
        """`untracked`: SQL that keeps the sampler out of pg_stat_statements (or "")."""
        self.cluster = cluster
        self.untracked = untracked
        self.version_num = version_num
        self.interval_s = interval_s
        self.counts: dict[str, int] = {}
        self.rounds = 0
        self.error: str | None = None
        self.busy_s = 0.0  # wall time spent waiting for answers (the sampler's own cost)
        self._stop = threading.Event()
        self._psql: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.version_num < 90600:
            self.error = "pg_stat_activity has no wait events before 9.6"
            return
        try:
            self._psql = self.cluster.psql_session()
            # The sampler must not appear among the top statements.
            prepare = f"PREPARE benchhub_waits AS {waits_query(self.version_num)};\n"
            self._send(f"{self.untracked}\n{prepare}")
            self._round(timeout_s=START_TIMEOUT_S, count=False)
        except (ClusterError, OSError, TimeoutError) as exc:
            self._fail(f"wait sampler could not start: {exc}")
            return
        self._thread = threading.Thread(target=self._loop, name="wait-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any] | None:
        """The `waits` part of the evidence (None when nothing could be sampled)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._close()
        if self.rounds == 0:
            return None
        return {
            "interval_ms": round(self.interval_s * 1000),
            "samples": self.rounds,
            "backend_samples": sum(self.counts.values()),
            "events": shares(self.counts),
        }

    # --- the connection -------------------------------------------------------------------------

    def _send(self, text: str) -> None:
        assert self._psql is not None and self._psql.stdin is not None
        self._psql.stdin.write(text)
        self._psql.stdin.flush()

    def _round(self, *, timeout_s: float, count: bool = True) -> None:
        """One sampling round: run the statement, read its lines up to the marker."""
        assert self._psql is not None and self._psql.stdout is not None
        started = time.monotonic()
        self._send(f"EXECUTE benchhub_waits;\n\\echo {MARKER}\n")
        found: dict[str, int] = {}
        while True:
            line = self._psql.stdout.readline()
            if not line:
                err = self._psql.stderr.read() if self._psql.stderr else ""
                raise ClusterError(f"psql ended: {err.strip()[-500:]}")
            line = line.rstrip("\n")
            if line == MARKER:
                break
            event, _, number = line.rpartition("|")
            if event:
                found[event] = found.get(event, 0) + int(number)
            if time.monotonic() - started > timeout_s:
                raise TimeoutError(f"no answer within {timeout_s} s")
        self.busy_s += time.monotonic() - started
        if count:
            self.rounds += 1
            for event, number in found.items():
                self.counts[event] = self.counts.get(event, 0) + number

    def _loop(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                self._round(timeout_s=max(5.0, self.interval_s * 10))
            except (ClusterError, OSError, TimeoutError, ValueError) as exc:
                if not self._stop.is_set():
                    self._fail(f"wait sampler stopped: {exc}")
                return
            next_at += self.interval_s
            # A slow round (a loaded server) skips ahead rather than sampling in a burst.
            next_at = max(next_at, time.monotonic())
            self._stop.wait(next_at - time.monotonic())

    def _fail(self, message: str) -> None:
        logger.warning("%s", message)
        self.error = message
        self._close()

    def _close(self) -> None:
        psql, self._psql = self._psql, None
        if psql is None:
            return
        try:
            if psql.stdin is not None:
                psql.stdin.close()
            psql.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            psql.kill()
            psql.wait(timeout=5)
