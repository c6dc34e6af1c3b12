"""Rate limits on failed authentication: sign-ins per username from one client address and per
client address, bearer tokens per client address. (Never per username alone: that would let
anyone lock an account out.)

Counters live in Django's cache (Redis, REDIS_URL, so every gunicorn worker shares them) under
fixed windows aligned to the clock: the key names the window, so Retry-After is the time to the
window's end and counters expire by themselves. A fixed window lets a burst straddle a boundary
(at most twice the limit), which is fine for refusing guessers.

When Redis is away the limits fail open (logged): people and agents keep signing in, as they
do without a Celery broker.

Only failures count, and a success costs nothing here for tokens: a correct token is never looked
up in Redis. Sign-ins are checked before the password is hashed (that is the expensive part a
guesser makes us do), and a successful sign-in clears its username's counter at that address.
"""

import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from redis.exceptions import RedisError

from benchhub.errors import ApplicationError

KEY_PREFIX = "ratelimit"
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    """At most `attempts` failures per `window_s` seconds for each key of `scope`."""

    scope: str
    attempts: int
    window_s: int


def login_user_limit() -> Limit:
    """Failed sign-ins per username from one client address (ident `username@address`)."""
    return Limit("login-user-ip", settings.RATELIMIT_LOGIN_USER, settings.RATELIMIT_WINDOW_S)


def login_ip_limit() -> Limit:
    return Limit("login-ip", settings.RATELIMIT_LOGIN_IP, settings.RATELIMIT_WINDOW_S)


def token_ip_limit() -> Limit:
    return Limit("token-ip", settings.RATELIMIT_TOKEN_IP, settings.RATELIMIT_WINDOW_S)


class RateLimited(ApplicationError):
    """Too many failures; retry after `retry_after` seconds."""

    status = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__("throttled", f"Too many failed attempts; retry in {retry_after} s.")
        self.retry_after = retry_after


def client_ip(request: HttpRequest) -> str:
    """The client's address. Behind BENCHHUB_PROXY_HOPS trusted proxies it is that many entries
    from the right of X-Forwarded-For (entries further left are whatever the client wrote)."""
    hops = settings.BENCHHUB_PROXY_HOPS
    if hops > 0:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _key(limit: Limit, ident: str, now: float) -> tuple[str, int]:
    window = int(now // limit.window_s)
    retry_after = max(1, math.ceil((window + 1) * limit.window_s - now))
    return f"{KEY_PREFIX}:{limit.scope}:{window}:{ident.lower()[:200]}", retry_after


def ratelimit_check(*, limit: Limit, ident: str) -> None:
    """Raise RateLimited when `ident` has used up its failures in this window."""
    key, retry_after = _key(limit, ident, time.time())
    try:
        count = cache.get(key) or 0
    except RedisError:
        logger.warning("rate limit %s not checked: Redis unavailable", limit.scope)
        return
    if count >= limit.attempts:
        raise RateLimited(retry_after)


def ratelimit_fail(*, limit: Limit, ident: str) -> None:
    """Count one failure of `ident`; raise RateLimited if it goes past the window's allowance
    (the first `attempts` failures are answered as failures, the ones after with 429)."""
    key, retry_after = _key(limit, ident, time.time())
    try:
        count = _increment(key, timeout=limit.window_s + 5)
    except RedisError:
        logger.warning("failure for rate limit %s not counted: Redis unavailable", limit.scope)
        return
    if count > limit.attempts:
        raise RateLimited(retry_after)


def _increment(key: str, *, timeout: int) -> int:
    # add() is a no-op when the key exists, so concurrent failures never reset the count; the
    # key outlives its window a little so a clock step cannot revive it.
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this failure starts a new count
        cache.add(key, 1, timeout=timeout)
        return 1


def ratelimit_reset(*, limit: Limit, ident: str) -> None:
    """Forget `ident`'s failures in this window (after it succeeded)."""
    try:
        cache.delete(_key(limit, ident, time.time())[0])
    except RedisError:
        logger.warning("rate limit %s not reset: Redis unavailable", limit.scope)
