"""Reads for hosts."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from benchhub.hosts.models import Host

MAX_HOSTS = 1000


def host_list() -> QuerySet[Host]:
    return Host.objects.select_related("current_facts").order_by("name")[:MAX_HOSTS]


@dataclass(frozen=True)
class HostPresence:
    """Whether a host's agent is around: `seen_s_ago` is None for a host never heard from."""

    name: str
    last_seen_at: datetime | None
    seen_s_ago: float | None
    online: bool


def host_presence_list(*, now: datetime | None = None) -> list[HostPresence]:
    """Every host (bounded), online first, then by name.

    Online means the agent called in (claim, heartbeat or upload) within
    settings.BENCHHUB_AGENT_ONLINE_S seconds of `now`.
    """
    now = now or timezone.now()
    limit = settings.BENCHHUB_AGENT_ONLINE_S
    hosts = []
    for name, seen in Host.objects.order_by("name").values_list("name", "last_seen_at")[:MAX_HOSTS]:
        ago = max((now - seen).total_seconds(), 0.0) if seen else None
        hosts.append(HostPresence(name, seen, ago, ago is not None and ago <= limit))
    return sorted(hosts, key=lambda host: not host.online)


@dataclass(frozen=True)
class HostSetAside:
    """The runs a host's agent set aside, as it last reported them (runners' spool.py)."""

    name: str
    reported_at: datetime | None
    runs: list[dict[str, Any]]


def host_set_aside_list() -> list[HostSetAside]:
    """Hosts whose agents reported runs set aside, by name (bounded; one query)."""
    rows = (
        Host.objects.exclude(spool_set_aside=[])
        .order_by("name")
        .values_list("name", "spool_reported_at", "spool_set_aside")[:MAX_HOSTS]
    )
    return [HostSetAside(name, at, list(runs)) for name, at, runs in rows]
