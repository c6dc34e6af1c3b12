"""Reads for hosts."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Exists, Max, OuterRef, QuerySet
from django.utils import timezone

from benchhub.hosts.models import Host, RunnerToken

MAX_HOSTS = 1000


def host_list() -> QuerySet[Host]:
    return Host.objects.select_related("current_facts").order_by("name")[:MAX_HOSTS]


def _has_agent() -> Exists:
    """Whether the host has a runner token (revoked or not), so an agent measures it. A host
    without one exists only because runs were imported under its name: no agent ever calls in
    for it, and it is never "offline"."""
    return Exists(RunnerToken.objects.filter(host=OuterRef("pk")))


@dataclass(frozen=True)
class HostPresence:
    """Whether a host's agent is around: `seen_s_ago` is None for a host never heard from;
    `agent` is False for a host only imported runs name (`online` is then False too)."""

    name: str
    last_seen_at: datetime | None
    seen_s_ago: float | None
    online: bool
    agent: bool


def host_presence_list(*, now: datetime | None = None) -> list[HostPresence]:
    """Every host (bounded): agents online first, then the other agents, then imported hosts,
    each by name.

    Online means the agent called in (claim, heartbeat or upload) within
    settings.BENCHHUB_AGENT_ONLINE_S seconds of `now`.
    """
    now = now or timezone.now()
    limit = settings.BENCHHUB_AGENT_ONLINE_S
    hosts = []
    hosts_by_name = Host.objects.annotate(agent=_has_agent()).order_by("name")
    rows = hosts_by_name.values_list("name", "last_seen_at", "agent")
    for name, seen, agent in rows[:MAX_HOSTS]:
        ago = max((now - seen).total_seconds(), 0.0) if seen else None
        online = agent and ago is not None and ago <= limit
        hosts.append(HostPresence(name, seen, ago, online, agent))
    return sorted(hosts, key=lambda host: (not host.online, not host.agent))


def host_overview_list(*, name_contains: str = "", measured_by: str = "") -> QuerySet[Host]:
    """The hosts for the host list, by name, each with `agent` (see _has_agent), `run_count`
    and `last_run_at` (the latest run's start, None without runs); one query (the page slices
    it). `name_contains`: only names holding it, case aside; `measured_by`: "agent" or
    "imported" (no agent measures it), anything else keeps every host."""
    hosts = Host.objects.annotate(
        agent=_has_agent(), run_count=Count("runs"), last_run_at=Max("runs__started_at")
    )
    if name_contains:
        hosts = hosts.filter(name__icontains=name_contains)
    if measured_by in ("agent", "imported"):
        hosts = hosts.filter(agent=measured_by == "agent")
    return hosts.order_by("name")


@dataclass(frozen=True)
class HostSetAside:
    """The runs a host's agent set aside, as it last reported them (runners' transport/spool.py)."""

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
