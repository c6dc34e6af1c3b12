"""What a notice says: the webhook's JSON document and the email's subject and body, from a
Notice and the changes it names (selectors.notice_read). Wording lives here; sending is
regressions.notifications'.

A group's notice reads as Perfherder's alert summary does: one host and commit range, its
direction, then one line per change (workload, client level, change with its interval), worst
first, and a link to the regressions page filtered to the group.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse

from benchhub.regressions.detection import CONFIRM
from benchhub.regressions.grouping import members_direction
from benchhub.regressions.models import AlertGroup, Notice, Regression


def signed_percent(value: float | None) -> str:
    """0.0123 -> "+1.2%"; None -> "-"."""
    return "-" if value is None else f"{value * 100:+.1f}%"


def interval_text(low: float | None, high: float | None) -> str:
    """The 95% interval of a change from its ends, or why there is none."""
    if low is None or high is None:
        return "no interval: a side has a single run"
    return f"95% interval {signed_percent(low)} to {signed_percent(high)}"


DIRECTION_TEXT: dict[str, str] = {
    AlertGroup.Direction.REGRESSION: "every one lost tps",
    AlertGroup.Direction.IMPROVEMENT: "every one gained tps",
    AlertGroup.Direction.MIXED: "some lost tps, others gained",
}


def _absolute(path: str) -> str:
    return settings.BENCHHUB_BASE_URL.rstrip("/") + path


def regression_url(regression: Regression) -> str:
    return _absolute(reverse("regression", kwargs={"regression_id": regression.pk}))


def group_url(group_id: int) -> str:
    """The regressions page filtered to one alert group: its changes, to triage together."""
    return _absolute(f"{reverse('regressions')}?group={group_id}")


def regression_document(regression: Regression) -> dict[str, Any]:
    """One change as a notice names it: a member of the webhook's `notice`."""
    return {
        "id": regression.pk,
        "kind": regression.kind,
        "state": regression.state,
        "host": regression.host.name,
        "workload": regression.workload.name,
        "clients": regression.clients,
        "comparability_key": regression.comparability_key,
        "change": regression.change,
        "change_low": regression.change_low,
        "change_high": regression.change_high,
        "per_week": regression.per_week,
        "before_tps": regression.before_tps,
        "after_tps": regression.after_tps,
        "p_value": regression.p_value,
        "run_before": str(regression.run_before.uuid),
        "run_after": str(regression.run_after.uuid),
        "version_before": regression.run_before.build.version,
        "version_after": regression.run_after.build.version,
        "detected_at": regression.detected_at.isoformat(),
        "url": regression_url(regression),
    }


def notice_direction(members: list[Regression]) -> str:
    """The direction of the changes named (a drift's: the way it goes)."""
    if len(members) == 1 and members[0].kind == Regression.Kind.DRIFT:
        return "regression" if members[0].change < 0 else "improvement"
    return members_direction(members)


def _worst(members: list[Regression]) -> float:
    return max((m.change for m in members), key=abs)


def _range(notice: Notice, members: list[Regression]) -> tuple[str, str, str]:
    """(host, version before, version after): the group's, or the drift's window's."""
    if notice.group is not None:
        group = notice.group
        return group.host.name, group.build_before.version, group.build_after.version
    first = members[0]
    return first.host.name, first.run_before.build.version, first.run_after.build.version


def notice_url(notice: Notice, members: list[Regression]) -> str:
    return group_url(notice.group_id) if notice.group_id else regression_url(members[0])


def notice_summary(notice: Notice, members: list[Regression]) -> str:
    """One line: the email's subject after "[BenchHub] ", the delivery log's entry."""
    if notice.group_id is None:
        drift = members[0]
        rate = f"{signed_percent(drift.per_week)} tps a week" if drift.per_week else ""
        return (
            f"{drift.kind}: {rate or signed_percent(drift.change) + ' tps'}, "
            f"{drift.workload.name} on {drift.host.name} at {_clients(drift)}"
        )
    host, before, after = _range(notice, members)
    count = f"{len(members)} {'more ' if notice.update else ''}change{_s(members)}"
    head = f"alert #{notice.group_id} update: " if notice.update else ""
    return (
        f"{head}{notice_direction(members)} on {host}, {before} → {after}: {count}, "
        f"worst {signed_percent(_worst(members))} tps"
    )


def _clients(regression: Regression) -> str:
    return f"{regression.clients} client{'' if regression.clients == 1 else 's'}"


def _s(members: list[Regression]) -> str:
    return "" if len(members) == 1 else "s"


def notice_document(notice: Notice, members: list[Regression]) -> dict[str, Any]:
    """The webhook's `notice`: the alert (host, commit range, direction, worst change), its
    members (regression_document each, worst first) and the page to triage them on."""
    host, before, after = _range(notice, members)
    group = notice.group
    return {
        "id": notice.pk,
        "kind": "drift" if group is None else "alert",
        "update": notice.update,
        "host": host,
        "version_before": before,
        "version_after": after,
        "direction": notice_direction(members),
        "worst_change": _worst(members),
        "group": None
        if group is None
        else {"id": group.pk, "direction": group.direction, "members": group.members},
        "members": [regression_document(m) for m in members],
        "url": notice_url(notice, members),
        "created_at": notice.created_at.isoformat(),
    }


def notice_event(notice: Notice) -> str:
    """The webhook's `event`: alert.detected, alert.updated or drift.detected."""
    if notice.group_id is None:
        return "drift.detected"
    return "alert.updated" if notice.update else "alert.detected"


def notice_email(notice: Notice, members: list[Regression]) -> tuple[str, str]:
    """(subject, body) of the email."""
    subject = f"[BenchHub] {notice_summary(notice, members)}"
    if notice.group is None:
        return subject, _drift_body(members[0])
    host, before, after = _range(notice, members)
    direction = notice_direction(members)
    if notice.update:
        head = (
            f"{len(members)} more change{_s(members)} in tps filed under alert "
            f"#{notice.group_id} since it was sent, on {host} between {before} and {after} "
            f"({direction}: {DIRECTION_TEXT[direction]}). The alert holds "
            f"{notice.group.members} changes now ({notice.group.direction}).\n"
        )
    else:
        head = (
            f"{len(members)} change{_s(members)} in tps on {host} between {before} and {after} "
            f"({direction}: {DIRECTION_TEXT[direction]}).\n"
        )
    lines = "\n".join(_member_line(m) for m in members)
    return subject, (
        f"{head}Each is confirmed: {CONFIRM} detections after uploads found it, a windowed "
        f"test agreeing.\n\n{lines}\n\n"
        f"Triage them together: {notice_url(notice, members)}\n"
    )


def _member_line(m: Regression) -> str:
    return (
        f"  {m.workload.name} at {_clients(m)}: {m.kind} {signed_percent(m.change)} "
        f"({interval_text(m.change_low, m.change_high)}), "
        f"{m.before_tps:.1f} → {m.after_tps:.1f} tps"
    )


def _drift_body(drift: Regression) -> str:
    rate = f" ({signed_percent(drift.per_week)} a week)" if drift.per_week else ""
    return (
        f"tps drifted by {signed_percent(drift.change)}{rate} "
        f"({interval_text(drift.change_low, drift.change_high)}),\n"
        f"from {drift.before_tps:.1f} to {drift.after_tps:.1f} (mean of the first and last "
        f"weeks),\nbetween {drift.run_before.build.version} (run {drift.run_before.uuid})\n"
        f"and {drift.run_after.build.version} (run {drift.run_after.uuid}).\n\n"
        f"Triage it: {regression_url(drift)}\n"
    )
