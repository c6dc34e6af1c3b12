"""What the Compare page's selection form offers (compare_choices)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from benchhub.hosts.models import Host, host_name_key
from benchhub.results.models import Run
from benchhub.workloads.models import Workload


@dataclass
class Choices:
    workloads: list[str]
    hosts: list[str]
    versions: list[str]


MAX_CHOICES = 500


def compare_choices(*, workload: str | None, host: str | None) -> Choices:
    """What the selection form offers: workload names and hosts that have runs, and the
    versions with runs of that workload on that host (in version order). Three queries."""
    # From the small tables, each row checked for one run through its (x, -started_at) index:
    # a DISTINCT over the runs read every run, and grew with the history (bench/, compare).
    workloads = list(
        Workload.objects.filter(Exists(Run.objects.filter(workload=OuterRef("pk"))))
        .order_by("name")
        .values_list("name", flat=True)
        .distinct()[:MAX_CHOICES]
    )
    hosts = list(
        Host.objects.filter(Exists(Run.objects.filter(host=OuterRef("pk"))))
        .order_by("name")
        .values_list("name", flat=True)[:MAX_CHOICES]
    )
    runs = Run.objects.all()
    if workload:
        runs = runs.filter(workload__name=workload)
    if host:
        runs = runs.filter(host__name_key=host_name_key(host))
    versions = [
        version
        for version, _ in runs.order_by("build__sort_key", "build__version")
        .values_list("build__version", "build__sort_key")
        .distinct()[:MAX_CHOICES]
    ]
    return Choices(workloads=workloads, hosts=hosts, versions=versions)
