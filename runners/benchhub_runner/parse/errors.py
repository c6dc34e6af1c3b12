"""The one exception the pgbench parsers raise.

Every public parse function either returns a result or raises :class:`PgbenchParseError`;
no other exception escapes for any text input. Callers (the agent after a run, the server when
importing historical logs) therefore need a single ``except`` clause.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

INTERNAL_ERROR_PREFIX = "internal parser error"


class PgbenchParseError(ValueError):
    """The text is not the expected pgbench output; the message says what was missing."""


def never_raises_other(func: Callable[P, R]) -> Callable[P, R]:
    """Turn any unexpected exception of ``func`` into a :class:`PgbenchParseError`.

    The parsers are written not to fail on odd input, but the promise to callers is absolute,
    so a bug surfaces as a parse error whose message starts with ``internal parser error``
    (which the property-based tests look for) instead of as a crash of the agent.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except PgbenchParseError:
            raise
        except Exception as exc:
            raise PgbenchParseError(f"{INTERNAL_ERROR_PREFIX}: {exc!r}") from exc

    return wrapper
