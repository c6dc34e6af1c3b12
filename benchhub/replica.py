"""Reads from a streaming replica (DATABASE_REPLICA_URL), where a stale answer is harmless.

Only reads inside `replica_reads()` may go to the replica, and the web server's middleware opens
it only for a safe request (GET, HEAD, OPTIONS) of a client that has written nothing in the last
BENCHHUB_REPLICA_PIN_S seconds: read your writes. A safe request that writes reads the primary
from its first write on. Everything else reads the primary: writes and
the reads of a writing request, Celery tasks, beat, management commands, and always the
sessions and the tokens (a session or a token just made must work at once).

The replica is used while it answers and its replay lag is at most BENCHHUB_REPLICA_MAX_LAG_S;
that is checked at most once a second in each process, and the primary serves in between checks
that failed. A request that finds the replica gone between two checks fails once, as a request
to a primary that goes away does.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections
from django.http import HttpRequest, HttpResponse

REPLICA = "replica"
PRIMARY = "default"
# Models whose rows a request must see as soon as they are written, wherever it comes from.
PRIMARY_ONLY = {("sessions", "session"), ("accounts", "personaltoken"), ("hosts", "runnertoken")}
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CHECK_EVERY_S = 1.0
LAG_SQL = """
SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
            ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 1e9)
       END
"""

_reads_allowed: ContextVar[bool] = ContextVar("benchhub_replica_reads", default=False)
# Set by the first write within replica_reads(): the rest of that request reads the primary, so a
# safe request that writes (a lazily made row, a last-seen time) reads back what it wrote.
_wrote: ContextVar[bool] = ContextVar("benchhub_replica_wrote", default=False)
_health: dict[str, float | bool] = {"checked": -CHECK_EVERY_S, "usable": False}


@contextmanager
def replica_reads() -> Iterator[None]:
    """Within it, reads may be answered by the replica (when one is configured and usable)."""
    allowed, wrote = _reads_allowed.set(True), _wrote.set(False)
    try:
        yield
    finally:
        _wrote.reset(wrote)
        _reads_allowed.reset(allowed)


@contextmanager
def primary_reads() -> Iterator[None]:
    """Within it, every read goes to the primary, even inside replica_reads(): for reads that
    must be at least as new as one already made on the primary."""
    allowed = _reads_allowed.set(False)
    try:
        yield
    finally:
        _reads_allowed.reset(allowed)


def replica_lag_s() -> float | None:
    """The replica's replay lag in seconds (0 when it has replayed all it received); None when
    it does not answer."""
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(LAG_SQL)
            return float(cursor.fetchone()[0])
    except DatabaseError:
        with suppress(DatabaseError):
            connections[REPLICA].close()
        return None


def replica_usable() -> bool:
    """Whether reads may go to the replica now; checked at most every CHECK_EVERY_S."""
    if REPLICA not in settings.DATABASES:
        return False
    now = time.monotonic()
    if now - float(_health["checked"]) >= CHECK_EVERY_S:
        lag = replica_lag_s()
        _health["usable"] = lag is not None and lag <= settings.REPLICA_MAX_LAG_S
        _health["checked"] = now
    return bool(_health["usable"])


class ReplicaRouter:
    """Django's database router: the replica for the reads replica_reads() allows."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        label = (model._meta.app_label, model._meta.model_name)
        allowed = _reads_allowed.get() and not _wrote.get()
        if allowed and label not in PRIMARY_ONLY and replica_usable():
            return REPLICA
        return PRIMARY

    def db_for_write(self, model: Any, **hints: Any) -> str:
        if _reads_allowed.get():
            _wrote.set(True)
        return PRIMARY

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # the same rows on both

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == PRIMARY


def _client_keys(request: HttpRequest, response: HttpResponse | None = None) -> list[str]:
    """Who is asking: their bearer token or session cookie (hashed), and a session cookie the
    response sets (a sign-in)."""
    values = [
        request.headers.get("Authorization", ""),
        request.COOKIES.get(settings.SESSION_COOKIE_NAME, ""),
    ]
    if response is not None and settings.SESSION_COOKIE_NAME in response.cookies:
        values.append(response.cookies[settings.SESSION_COOKIE_NAME].value)
    return [
        "replica-pin:" + hashlib.sha256(value.encode()).hexdigest() for value in values if value
    ]


class ReplicaReadsMiddleware:
    """Opens replica_reads() for safe requests of clients that wrote nothing lately; after an
    unsafe request, pins its client to the primary for BENCHHUB_REPLICA_PIN_S."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if REPLICA not in settings.DATABASES:
            return self.get_response(request)
        if request.method in SAFE_METHODS:
            keys = _client_keys(request)
            if keys and _pinned(keys):
                return self.get_response(request)
            with replica_reads():
                return self.get_response(request)
        response = self.get_response(request)
        pins = _client_keys(request, response)
        if pins:
            # Without Redis the pin is lost; so is the cache's every other use, and rate limits.
            with suppress(redis.RedisError):
                cache.set_many(dict.fromkeys(pins, 1), timeout=settings.REPLICA_PIN_S)
        return response


def _pinned(keys: list[str]) -> bool:
    """Whether any of these clients wrote lately; a Redis that does not answer says yes."""
    try:
        return bool(cache.get_many(keys))
    except redis.RedisError:
        return True
