"""The triage list's rows as the page shows them, formatted once here: the template's filters
(a date in the current time zone, three percentages, a URL) on every cell of 200 rows were
most of the page's time (bench/compare.py, regressions page)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone

from benchhub.regressions.models import AlertGroup, Regression
from benchhub.regressions.notices import interval_text, signed_percent


@dataclass(frozen=True)
class ListRow:
    pk: int
    url: str
    detected: str
    kind: str
    change: str
    interval: str
    host: str
    workload: str
    clients: int
    between: str
    state: str
    # The alert it is filed under (regressions.grouping): "" when none yet.
    group_url: str = ""
    group: str = ""


def list_rows(regressions: list[dict[str, Any]]) -> list[ListRow]:
    """One row per change (selectors.regression_rows), in the order given."""
    return [
        ListRow(
            pk=r["id"],
            url=reverse("regression", args=[r["id"]]),
            detected=timezone.localtime(r["detected_at"]).strftime("%Y-%m-%d %H:%M"),
            kind=r["kind"],
            change=signed_percent(r["change"]),
            interval=interval_text(r["change_low"], r["change_high"]),
            host=r["host__name"],
            workload=r["workload__name"],
            clients=r["clients"],
            between=f"{r['run_before__build__version']} → {r['run_after__build__version']}",
            state=Regression.State(r["state"]).label,
            group_url=f"{reverse('regressions')}?group={r['group_id']}" if r["group_id"] else "",
            group=_group_text(r),
        )
        for r in regressions
    ]


def _group_text(row: dict[str, Any]) -> str:
    if not row["group_id"]:
        return ""
    count = row["group__members"]
    return (
        f"#{row['group_id']} {row['group__direction']}, {count} change{'s' if count != 1 else ''}"
    )


@dataclass(frozen=True)
class GroupRow:
    pk: int
    url: str
    host: str
    between: str
    direction: str
    members: int
    untriaged: int
    worst: str
    updated: str


def group_rows(groups: list[AlertGroup]) -> list[GroupRow]:
    """One row per alert group (selectors.group_list), in the order given, linking to the
    regressions page filtered to its changes."""
    return [
        GroupRow(
            pk=g.pk,
            url=f"{reverse('regressions')}?group={g.pk}",
            host=g.host.name,
            between=f"{g.build_before.version} → {g.build_after.version}",
            direction=g.direction,
            members=g.members,
            untriaged=getattr(g, "untriaged", 0),
            worst=signed_percent(g.worst_change),
            updated=timezone.localtime(g.updated_at).strftime("%Y-%m-%d %H:%M"),
        )
        for g in groups
    ]
