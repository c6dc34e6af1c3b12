"""What the Compare page's selection form offers (compare_choices)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from django.db import connection
from django.db.models import Exists, OuterRef

from benchhub.builds.versions import PATCH_MARK, VersionError, version_parse
from benchhub.compare.selectors.cached import cache_read, cache_write
from benchhub.hosts.models import Host, host_name_key
from benchhub.results.models import Run
from benchhub.workloads.models import Workload


@dataclass
class Choices:
    workloads: list[str]
    hosts: list[str]
    versions: list[str]


MAX_CHOICES = 500
# The lists change only when a run is stored (runs are never deleted, nor moved to another
# host, workload or build), so they are cached under the newest run: the bound only limits
# what a database restored under the same newest run could show.
CHOICES_CACHE_S = 600


def compare_choices(*, workload: str | None, host: str | None) -> Choices:
    """What the selection form offers: workload names and hosts that have runs, and the
    versions with runs of that workload on that host (in version order). One query (the
    newest run, through the primary key) when cached under that run, else four; a cache that
    does not answer (Redis down) reads the lists. At 10M results the three lists cost the page
    8.7 ms of SQL and Python on every view."""
    newest = Run.objects.order_by("-id").values_list("id", "uuid").first()
    selection = repr((connection.settings_dict["NAME"], newest, workload, host))
    key = f"compare-choices:{hashlib.sha256(selection.encode()).hexdigest()}"
    cached = cache_read(key)
    if cached is not None:
        return Choices(**cached)
    choices = _choices_read(workload=workload, host=host)
    cache_write(key, asdict(choices), timeout=CHOICES_CACHE_S)
    return choices


def _choices_read(*, workload: str | None, host: str | None) -> Choices:
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


@dataclass
class VersionGroup:
    """A group of the versions the form offers: `name` ("Major versions", "Exact versions")
    and its (version, checked) pairs."""

    name: str
    choices: list[tuple[str, bool]]


def _bare_major(version: str) -> str | None:
    """The major a version belongs to when it is one people compare by ("13.23" -> "13"; a
    patched build, a commit or a name that is not a version has none); a bare major is its own."""
    try:
        parsed = version_parse(version)
    except VersionError:
        return None
    if PATCH_MARK in version or not version_parse(parsed.major).series:
        return None
    return parsed.major


def versions_grouped(*, versions: list[str], selected: list[str]) -> list[VersionGroup]:
    """The versions of `versions` (in version order) and `selected` (what the query asked for)
    once each, as people name them: the majors ("13": its newest run, compare.selectors.versions)
    and the exact versions ("13.23"), the selected ones checked. Groups without a version are
    left out."""
    majors: list[str] = []
    exact: list[str] = []
    for version in dict.fromkeys([*versions, *selected]):
        major = _bare_major(version)
        if major == version:
            majors.append(version)
            continue
        exact.append(version)
        if major is not None:
            majors.append(major)
    majors = list(dict.fromkeys(majors))
    exact = [v for v in exact if v not in majors]
    groups = [
        VersionGroup("Major versions", [(v, v in selected) for v in majors]),
        VersionGroup("Exact versions", [(v, v in selected) for v in exact]),
    ]
    return [group for group in groups if group.choices]
