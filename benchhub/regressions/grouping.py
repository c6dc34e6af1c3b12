"""Alert groups: the changes detected on one host between the same two builds, across client
levels and workloads, filed as one alert (AlertGroup), as Perfherder's alert summaries file a
push's alerts. A person bisects a commit range on a host once, whatever number of series moved
with it; a group of a 10% loss at 1 client and a 4% gain at 64 is one `mixed` alert rather than
two that contradict each other.

Written by detection (regressions.services.series_detect files each change it stores); the
direction, size and count are recomputed from the members each time one is filed or moves.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from benchhub.regressions.models import AlertGroup, Regression
from benchhub.results.models import Run


def group_file(*, regression: Regression) -> AlertGroup:
    """File a stored change under the group of its host and commit range (the builds of its
    run before and run after), creating the group if need be, and update that group's (and the
    one it left, if it moved) direction, size and count. In the caller's transaction; locks
    the group rows so two workers filing into one group agree."""
    builds = dict(
        Run.objects.filter(pk__in=[regression.run_before_id, regression.run_after_id]).values_list(
            "pk", "build_id"
        )
    )
    with transaction.atomic():
        group, _ = AlertGroup.objects.select_for_update().get_or_create(
            host_id=regression.host_id,
            build_before_id=builds[regression.run_before_id],
            build_after_id=builds[regression.run_after_id],
            defaults={
                "direction": members_direction([regression]),
                "worst_change": regression.change,
            },
        )
        left = regression.group_id if regression.group_id != group.pk else None
        if regression.group_id != group.pk:
            regression.group = group
            regression.save(update_fields=["group"])
        group_refresh(group_id=group.pk)
        if left is not None:
            group_refresh(group_id=left)
    group.refresh_from_db()
    return group


def members_direction(members: list[Regression]) -> str:
    """`regression` or `improvement` when every change went that way, else `mixed`."""
    kinds = {member.kind for member in members}
    if kinds == {Regression.Kind.REGRESSION}:
        return AlertGroup.Direction.REGRESSION
    if kinds == {Regression.Kind.IMPROVEMENT}:
        return AlertGroup.Direction.IMPROVEMENT
    return AlertGroup.Direction.MIXED


def group_refresh(*, group_id: int) -> None:
    """Recompute a group from its members that are not withdrawn (a withdrawn change was no
    change of PostgreSQL); a group left without members is deleted."""
    group = AlertGroup.objects.select_for_update().filter(pk=group_id).first()
    if group is None:
        return
    members = list(
        group.regressions.exclude(state=Regression.State.WITHDRAWN).only("kind", "change")
    )
    if not group.regressions.exists():
        group.delete()
        return
    group.members = len(members)
    group.direction = members_direction(members) if members else group.direction
    group.worst_change = max((m.change for m in members), key=abs, default=group.worst_change)
    group.updated_at = timezone.now()
    group.save(update_fields=["members", "direction", "worst_change", "updated_at"])
