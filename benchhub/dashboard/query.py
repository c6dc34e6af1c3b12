"""Reading the pages' request parameters, so that `?invalid=1`, `?level=8` or `?versions=13,14`
mean the same on every page. Views parse through these and nothing else.

SignedInRequest types the request of a view behind login_required: its user is a person.

A parameter that must be valid raises ApplicationError naming it (`field`); the view shows the
message next to that field.
"""

import uuid

from django.contrib.auth.models import User
from django.http import HttpRequest, QueryDict

from benchhub.errors import ApplicationError
from benchhub.querystrings import flag as flag  # pages read their flags through this module
from benchhub.querystrings import listed, tags_listed


class SignedInRequest(HttpRequest):
    user: User


def flag_or_none(value: str | None) -> bool | None:
    """A checkbox or `?name=1` (read by querystrings.flag) that may be left out: None when
    absent, so "leave as it is" differs from "off"."""
    return None if value is None else flag(value)


def level(query: QueryDict, name: str = "level") -> int | None:
    """`?level=n` (or `name`), the client level a page shows in detail; None when absent or
    not a number."""
    try:
        return int(query.get(name, ""))
    except ValueError:
        return None


def versions(query: QueryDict) -> list[str]:
    """`?versions=a,b` or repeated `?versions=a&versions=b` (checkboxes), in order, each once."""
    return listed(query.getlist("versions"))


def tags(query: QueryDict) -> list[str]:
    """`?tag=a,b` or repeated `?tag=a&tag=b`: the review tags every run shown must carry.
    Raises ApplicationError naming `tag` past the bounds (querystrings.tags_listed)."""
    try:
        return tags_listed(query.getlist("tag"))
    except ValueError as exc:
        raise ApplicationError("invalid", str(exc), field="tag") from None


def required(query: QueryDict, name: str) -> str:
    value = (query.get(name) or "").strip()
    if not value:
        raise ApplicationError("invalid", f"{name} is required.", field=name)
    return value


def clients(query: QueryDict) -> int:
    """`?clients=n`, a client level: a whole number, at least 1."""
    try:
        value = int(query.get("clients", ""))
    except ValueError:
        raise ApplicationError(
            "invalid", "clients must be a whole number of clients.", field="clients"
        ) from None
    if value < 1:
        raise ApplicationError("invalid", "clients must be at least 1.", field="clients")
    return value


def ids(query: QueryDict, name: str) -> list[int]:
    """`?name=3,5` or repeated `?name=3&name=5`: the positive whole numbers given, in order,
    each once; anything else is left out (a page's script sends these, not a person)."""
    parts = listed(query.getlist(name))
    # Nine digits at most: every id fits a PostgreSQL integer.
    return [int(p) for p in parts if p.isascii() and p.isdigit() and len(p) <= 9 and int(p) > 0]


def run_uuid(value: str | None) -> uuid.UUID | None:
    """A run's UUID as typed into a form; None for anything else."""
    try:
        return uuid.UUID((value or "").strip())
    except ValueError:
        return None


RUN_FILTERS = ("host", "version", "workload", "status")


def run_filters(query: QueryDict, *, statuses: list[str]) -> dict[str, str]:
    """The run list's filters (`?host=&version=&workload=&status=`) that are given, for
    results.selectors.run_list; a status not in `statuses` is refused, naming `status`."""
    filters = {name: query.get(name, "").strip() for name in RUN_FILTERS}
    filters = {name: value for name, value in filters.items() if value}
    if "status" in filters and filters["status"] not in statuses:
        raise ApplicationError(
            "invalid", f"status must be one of {', '.join(statuses)}.", field="status"
        )
    return filters
