import random
from importlib import import_module

import pytest
from django.apps import apps

from benchhub.builds.models import Build
from benchhub.builds.services import build_get_or_create
from benchhub.builds.versions import VersionError, version_parse

ORDERED = [
    "9.2.24",
    "9.5.4",
    "9.6beta1",
    "9.6.0",
    "9.6.24",
    "9.6.24+slow-commit",
    "10.1",
    "13.3",
    "14devel-2021-05-01",
    "14beta1",
    "14rc1",
    "14.0",
    "14.1",
    "14.23",
    "15.18",
    "15.18+a-patch",
    "15.18+slow-commit",
    "15.19",
    "master@1a2b3c4",
    "master+pgxact-split",
    "master-2021-05-01",
]


def test_it_orders_the_published_versions():
    names = ORDERED.copy()
    random.Random(7).shuffle(names)
    assert sorted(names, key=lambda n: version_parse(n).sort_key) == ORDERED


def test_it_orders_in_the_database(db):
    names = ORDERED.copy()
    random.Random(3).shuffle(names)
    for name in names:
        build_get_or_create(version=name)
    assert list(Build.objects.order_by("sort_key").values_list("version", flat=True)) == ORDERED


@pytest.mark.parametrize(
    ("name", "major", "minor", "stage", "number"),
    [
        ("9.5.4", "9.5", 4, "release", None),
        ("9.6", "9.6", 0, "release", None),
        ("master+pgxact-split", "master", None, "devel", None),
        ("13.3", "13", 3, "release", None),
        ("14beta1", "14", None, "beta", 1),
        ("14", "14", 0, "release", None),
        ("14devel", "14", None, "devel", None),
    ],
)
def test_it_parses_major_minor_and_stage(name, major, minor, stage, number):
    version = version_parse(name)
    assert (version.major, version.minor, version.stage, version.stage_number) == (
        major,
        minor,
        stage,
        number,
    )


def test_it_reads_snapshot_dates_and_commits():
    snapshot = version_parse("14devel-20210501")
    assert snapshot.snapshot_date.isoformat() == "2021-05-01"
    assert version_parse("14devel@abcdef12").commit == "abcdef12"
    assert (
        version_parse("14devel-2021-05-01").sort_key < version_parse("14devel-2021-06-01").sort_key
    )


@pytest.mark.parametrize(
    "name",
    ["", "fourteen", "14.3.1.1", "14beta", "8.4.0x", "14devel-2021-13-01", "9", "14-", "master+"],
)
def test_it_refuses_what_is_not_a_version(name):
    with pytest.raises(VersionError):
        version_parse(name)


def test_it_keeps_one_build_per_identity(db):
    a = build_get_or_create(version="13.3", origin="prebuilt")
    b = build_get_or_create(version="13.3", origin="prebuilt")
    c = build_get_or_create(version="13.3", origin="source", configure_flags="--enable-debug")
    assert a.pk == b.pk != c.pk


def test_it_reparses_builds_stored_under_the_old_grammar(db):
    # What the old grammar stored for "9.6": major 9, minor 6, sorting as 9.0.6.
    old = build_get_or_create(version="9.6")
    Build.objects.filter(pk=old.pk).update(major="9", minor=6, sort_key=[9, 0, 4, 0, 6, 0])
    newer = build_get_or_create(version="9.5.4")

    import_module("benchhub.builds.migrations.0002_build_versions_reparsed").reparse(apps, None)

    old.refresh_from_db()
    assert (old.major, old.minor, old.sort_key) == ("9.6", 0, [9, 6, 4, 0, 0, 0])
    assert list(Build.objects.order_by("sort_key")) == [newer, old]


def test_it_rekeys_branch_snapshots_stored_as_the_development_head_of_their_day(db):
    # What the earlier order stored for a 13 snapshot of 2021-05-01: 13devel of that day.
    snapshot = build_get_or_create(version="13-snapshot-2021-05-01")
    Build.objects.filter(pk=snapshot.pk).update(sort_key=[13, 0, 0, 0, 0, 20210501])
    released = [build_get_or_create(version=v) for v in ("13.2", "13.3", "13beta1")]

    import_module("benchhub.builds.migrations.0004_branch_snapshots_rekeyed").rekey(apps, None)

    ordered = [b.version for b in Build.objects.order_by("sort_key")]
    assert ordered == ["13beta1", "13.2", "13-snapshot-2021-05-01", "13.3"]
    assert {b.version for b in released} < set(ordered)
