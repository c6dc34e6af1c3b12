"""Reads for regressions: the series detection reads, the triage list, the markers of a history
chart, a person's subscriptions, webhooks and delivery log. Every list is bounded and fetches its
relations up front (a fixed number of queries whatever the number of rows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Prefetch, Q, QuerySet

from benchhub.compare.selectors import HELD_COLUMNS, held_runs, with_threads
from benchhub.compare.splits import Split, series_splits
from benchhub.hosts.models import host_name_key
from benchhub.regressions.models import (
    AlertGroup,
    Delivery,
    Notice,
    Regression,
    RegressionEvent,
    Subscription,
    Webhook,
)
from benchhub.results.models import LevelAggregate

# Detection looks at the newest points of a series only (stats.changepoints.RECENT is 200).
SERIES_MAX_POINTS = 200
LOG_LIMIT = 200
MARKERS_LIMIT = 100
DELIVERIES_LIMIT = 100

REGRESSION_RELATIONS = (
    "host",
    "workload",
    "run_before",
    "run_before__build",
    "run_after",
    "run_after__build",
    "run_after__config",
    "baseline_run",
    "baseline_run__build",
    "state_changed_by",
    "group",
)


@dataclass(frozen=True)
class SeriesPoint:
    run_id: int
    version: str
    tps: float
    baseline: bool
    started_at: datetime | None = None


@dataclass(frozen=True)
class Series:
    """A series' points, oldest first, and where it stops being like with like."""

    points: list[SeriesPoint]
    splits: list[Split]


def series_points(*, comparability_key: str, clients: int, host_id: int) -> Series:
    """One series as History draws it: in time order (when each run started), the median tps
    of each valid, aggregated run of this comparability key at this client level on this host
    (hosts with the same hardware share a key, but not a series), the newest SERIES_MAX_POINTS,
    with its splits (compare.splits). Three queries: the points, their host facts and their
    builds."""
    rows = [
        row
        for row in with_threads(
            LevelAggregate.objects.filter(
                comparability_key=comparability_key,
                clients=clients,
                host_id=host_id,
                run__invalid=False,
                tps_median__isnull=False,
            )
        )
        .order_by("-run__started_at", "-run_id")
        .values_list(
            "run_id",
            "build__version",
            "tps_median",
            "run__baseline",
            *HELD_COLUMNS,
            named=True,
        )[:SERIES_MAX_POINTS]
    ]
    rows.reverse()
    points = [
        SeriesPoint(
            run_id=row.run_id,
            version=row.build__version,
            tps=row.tps_median,
            baseline=row.run__baseline,
            started_at=row.run__started_at,
        )
        for row in rows
    ]
    return Series(points=points, splits=series_splits(rows, held_runs(rows), clients=clients))


def regression_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Regression]:
    """Regressions newest first, filtered by state, kind, host (name), workload (name), clients
    and alert group (id); with relations; the caller slices or paginates."""
    filters = filters or {}
    regressions = Regression.objects.select_related(*REGRESSION_RELATIONS)
    if filters.get("state"):
        regressions = regressions.filter(state=filters["state"])
    if filters.get("kind"):
        regressions = regressions.filter(kind=filters["kind"])
    if filters.get("host"):
        regressions = regressions.filter(host__name_key=host_name_key(filters["host"]))
    if filters.get("workload"):
        regressions = regressions.filter(workload__name=filters["workload"])
    if filters.get("clients"):
        regressions = regressions.filter(clients=filters["clients"])
    if filters.get("group"):
        regressions = regressions.filter(group_id=filters["group"])
    return regressions.order_by("-detected_at", "-id")


# What the triage list shows of each change (regressions/list.html): the runs' and their
# configurations' JSON (hundreds of settings each, three runs a row) stays in the database,
# and so do the seven model instances a row would cost.
LIST_COLUMNS = (
    "id",
    "kind",
    "state",
    "change",
    "change_low",
    "change_high",
    "clients",
    "detected_at",
    "host__name",
    "workload__name",
    "run_before__build__version",
    "run_after__build__version",
    "group_id",
    "group__direction",
    "group__members",
)


def regression_rows(*, filters: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """The newest `limit` changes matching `filters` (as regression_list), as dicts of only the
    columns the list page shows (LIST_COLUMNS): one query, and no model instance per row."""
    return list(regression_list(filters=filters).values(*LIST_COLUMNS)[:limit])


def regression_get(*, regression_id: int) -> Regression | None:
    return Regression.objects.select_related(*REGRESSION_RELATIONS).filter(pk=regression_id).first()


def regression_events(*, regression: Regression) -> list[RegressionEvent]:
    """The state-change log of a regression, newest first."""
    return list(
        RegressionEvent.objects.filter(regression=regression)
        .select_related("actor")
        .order_by("-at", "-id")[:LOG_LIMIT]
    )


def history_markers(
    *, host_id: int, workload: str, clients: int, config_hash: str | None
) -> list[Regression]:
    """The changes detected in one history series (the history page's host, workload, level and
    configuration), oldest first, with the run after each (its start is the marker's place);
    not the withdrawn ones."""
    if config_hash is None:
        return []
    markers = (
        Regression.objects.filter(
            host_id=host_id,
            workload__name=workload,
            clients=clients,
            run_after__config__hash=config_hash,
        )
        # A withdrawn change spans a split, which the chart marks already: no change is drawn
        # across one.
        .exclude(state=Regression.State.WITHDRAWN)
        .select_related("run_after", "run_after__build")
        .order_by("-run_after__started_at", "-id")[:MARKERS_LIMIT]
    )
    return list(reversed(markers))


def subscription_list(*, user: Any) -> list[Subscription]:
    return list(Subscription.objects.filter(user=user).order_by("host_name", "workload_name"))


def webhook_list(*, user: Any) -> list[Webhook]:
    return list(Webhook.objects.filter(user=user).order_by("created_at", "id"))


# What a notice names of each member (regressions.notices), read with the members.
MEMBER_RELATIONS = ("host", "workload", "run_before__build", "run_after__build")


def _members() -> Prefetch:
    return Prefetch(
        "notice__members",
        queryset=Regression.objects.select_related(*MEMBER_RELATIONS).order_by(
            "workload__name", "clients", "id"
        ),
    )


def delivery_list(*, user: Any) -> list[Delivery]:
    """A person's delivery log (emails and webhook calls), newest first, with each one's notice,
    its group and members: two queries."""
    return list(
        Delivery.objects.filter(user=user)
        .select_related(
            "webhook",
            "notice__group__host",
            "notice__group__build_before",
            "notice__group__build_after",
        )
        .prefetch_related(_members())
        .order_by("-created_at", "-id")[:DELIVERIES_LIMIT]
    )


def notice_read(*, notice_id: int) -> tuple[Notice, list[Regression]] | None:
    """A notice with its group and the changes it names, worst first (what it says:
    regressions.notices): two queries."""
    notice = (
        Notice.objects.select_related("group__host", "group__build_before", "group__build_after")
        .filter(pk=notice_id)
        .first()
    )
    if notice is None:
        return None
    members = list(
        Regression.objects.filter(notice=notice).select_related(*MEMBER_RELATIONS).order_by("id")
    )
    members.sort(key=lambda m: -abs(m.change))
    return notice, members


def subscribers(*, host_name: str, workload_names: list[str]) -> list[Any]:
    """The people subscribed to a change on this host of any of these workloads, each once,
    with their webhooks prefetched."""
    matching = Subscription.objects.filter(
        Q(host_name="") | Q(host_name=host_name),
        Q(workload_name="") | Q(workload_name__in=workload_names),
    )
    return list(
        get_user_model()
        .objects.filter(is_active=True, subscriptions__in=matching)
        .distinct()
        .prefetch_related("webhooks")
        .order_by("pk")
    )


GROUP_ORDER = ("-updated_at", "-id")


def group_list(*, filters: dict[str, Any] | None = None) -> QuerySet[AlertGroup]:
    """Alert groups with at least one change that is not withdrawn, the most recently changed
    first, filtered by host (name) and direction; each with its host and builds, and
    `untriaged`, how many of its changes are still `new` (one query with the count; the
    caller slices or paginates)."""
    filters = filters or {}
    groups = AlertGroup.objects.filter(members__gt=0).select_related(
        "host", "build_before", "build_after"
    )
    if filters.get("host"):
        groups = groups.filter(host__name_key=host_name_key(filters["host"]))
    if filters.get("direction"):
        groups = groups.filter(direction=filters["direction"])
    untriaged = Count("regressions", filter=Q(regressions__state=Regression.State.NEW))
    return groups.annotate(untriaged=untriaged).order_by(*GROUP_ORDER)
