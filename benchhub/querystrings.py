"""A flag in a query string or a form, read the same way by pages, the API and comparison keys;
and a list parameter (`?tag=a&tag=b` or `?tag=a,b`), read the same way everywhere too.

`?invalid=1`, `?invalid=true`, `?invalid=on` (what a checked checkbox sends) and `?invalid=yes`
all turn a flag on, in any case; anything else, an absent parameter included, leaves it off. One
reading everywhere keeps a permalink meaning what its page shows.
"""

from collections.abc import Iterable
from typing import Any

TRUE = frozenset({"1", "true", "on", "yes"})


def flag(value: Any) -> bool:
    """Whether a parameter's value turns its flag on: 1, true, on or yes, in any case, with
    surrounding spaces ignored. None (the parameter left out) is off."""
    return value is not None and str(value).strip().lower() in TRUE


# A tag filter's bounds (`?tag=`): tags are review's names, at most 50 characters each.
TAGS_MAX = 10
TAG_MAX_LENGTH = 50


def listed(values: Iterable[str]) -> list[str]:
    """A parameter that may be repeated or comma-separated, or both (`?tag=a&tag=b,c`): its
    parts in order, stripped, each once, blanks dropped."""
    found: list[str] = []
    for value in values:
        for part in value.split(","):
            if part.strip() and part.strip() not in found:
                found.append(part.strip())
    return found


def tags_listed(values: Iterable[str]) -> list[str]:
    """The tags a filter asks for (listed), every one of which a run must carry. Raises
    ValueError saying which bound is broken: at most TAGS_MAX tags of TAG_MAX_LENGTH
    characters."""
    tags = listed(values)
    if len(tags) > TAGS_MAX:
        raise ValueError(f"At most {TAGS_MAX} tags, not {len(tags)}.")
    long = next((tag for tag in tags if len(tag) > TAG_MAX_LENGTH), None)
    if long is not None:
        raise ValueError(f"A tag is at most {TAG_MAX_LENGTH} characters: {long[:60]!r}.")
    return tags
