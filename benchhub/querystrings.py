"""A flag in a query string or a form, read the same way by pages, the API and comparison keys.

`?invalid=1`, `?invalid=true`, `?invalid=on` (what a checked checkbox sends) and `?invalid=yes`
all turn a flag on, in any case; anything else, an absent parameter included, leaves it off. One
reading everywhere keeps a permalink meaning what its page shows.
"""

from typing import Any

TRUE = frozenset({"1", "true", "on", "yes"})


def flag(value: Any) -> bool:
    """Whether a parameter's value turns its flag on: 1, true, on or yes, in any case, with
    surrounding spaces ignored. None (the parameter left out) is off."""
    return value is not None and str(value).strip().lower() in TRUE
