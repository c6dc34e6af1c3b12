"""Runs of builds from source: the provenance the agent uploads is stored on the Build, one
Build per resolved input, sorted after its base, and shown on the run and diff pages."""

import json
from typing import Any

from django.test import Client

from benchhub.builds.models import Build
from benchhub.builds.services import recipe_create
from benchhub.compare.selectors import comparison_get
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import run_payload

COMMIT = "9f1c2d3e4b5a69788796a5b4c3d2e1f001122334"
PREVIOUS = "0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3"
SHA = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"


def provenance(*, key: str, patches: list[dict] | None = None) -> dict:
    return {
        "name": "master+pgxact-split",
        "key": key,
        "version": "18devel",
        "source": {
            "kind": "git",
            "repository": "https://git.example.org/pg.git",
            "ref": "master",
            "commit": COMMIT,
            "commit_date": "2021-05-01T10:00:00+00:00",
        },
        "patches": patches or [],
        "configure_flags": ["--enable-debug"],
        "configure_args": ["--prefix=/var/cache/x", "--enable-debug", "CC=ccache gcc"],
        "build_mode": f"incremental from {PREVIOUS}",
        "cflags": "-O2",
        "contrib": ["pg_stat_statements"],
        "compiler": {"cc": "gcc", "version": "gcc (Debian 12.2.0-14) 12.2.0"},
        "ccache": {"used": True},
        "jobs": 2,
        "pg_config": {"VERSION": "PostgreSQL 18devel", "CONFIGURE": "'--enable-debug'"},
        "build_seconds": 93.4,
        "built_at": "2026-11-23T07:00:00+00:00",
        "reused": False,
    }


def upload(agent, name: str, prov: dict | None) -> dict:
    build: dict[str, Any] = {"version": name, "origin": "source" if prov else "prebuilt"}
    if prov:
        build.update(commit=COMMIT, configure_flags="--enable-debug", provenance=prov)
    payload = run_payload(version=name, build=build, server_version="18devel")
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload


def test_it_keeps_one_build_per_resolved_input_after_its_base(agent, alice):
    recipe_create(
        name="master@1a2b3c4",
        source={"kind": "git", "url": "https://git.example.org/pg.git", "ref": "1a2b3c4"},
        created_by=alice,
    )
    recipe_create(
        name="master+pgxact-split",
        base="master@1a2b3c4",
        source={"kind": "git", "url": "https://git.example.org/pg.git", "ref": "master"},
        created_by=alice,
    )
    patch = {"name": "pgxact-split.patch", "sha256": SHA}
    upload(agent, "master+pgxact-split", provenance(key="a" * 24, patches=[patch]))
    upload(agent, "master+pgxact-split", provenance(key="a" * 24, patches=[patch]))
    upload(agent, "master+pgxact-split", provenance(key="b" * 24))
    upload(agent, "master@1a2b3c4", provenance(key="c" * 24))
    upload(agent, "14.0", None)

    builds = list(Build.objects.order_by("sort_key", "input_key"))

    assert [(b.version, b.input_key) for b in builds] == [
        ("14.0", ""),
        ("master@1a2b3c4", "c" * 24),
        ("master+pgxact-split", "a" * 24),
        ("master+pgxact-split", "b" * 24),
    ]
    patched = builds[2]
    assert patched.recipe.name == "master+pgxact-split" and patched.origin == "source"
    assert patched.commit == COMMIT and patched.provenance["patches"] == [patch]
    assert patched.runs.count() == 2


def test_it_refuses_a_provenance_without_its_key(agent):
    payload = run_payload(
        version="15.18",
        build={"version": "15.18", "origin": "source", "provenance": {"name": "15.18"}},
    )
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 400
    assert "build.provenance" in response.json()["fields"]
    assert Build.objects.count() == 0


def test_it_shows_the_provenance_on_the_run_page_and_in_the_diff(agent, alice):
    recipe_create(
        name="master+pgxact-split",
        source={"kind": "git", "url": "https://git.example.org/pg.git", "ref": "master"},
        created_by=alice,
    )
    patched = upload(
        agent,
        "master+pgxact-split",
        provenance(key="a" * 24, patches=[{"name": "pgxact-split.patch", "sha256": SHA}]),
    )
    plain = upload(agent, "master+pgxact-split", provenance(key="b" * 24))
    page = Client().get(f"/runs/{patched['run_uuid']}/").content.decode()

    assert 'id="build-provenance"' in page
    assert COMMIT in page and "2021-05-01T10:00:00+00:00" in page
    assert f"pgxact-split.patch (sha256 {SHA})" in page
    assert "gcc (Debian 12.2.0-14) 12.2.0" in page and "93.4 s" in page
    # How the agent built it: its kept tree, moved from the commit before.
    assert f"incremental from {PREVIOUS}" in page
    assert "PostgreSQL 18devel" in page
    diff = Client().get(f"/diff/?a={patched['run_uuid']}&b={plain['run_uuid']}").content.decode()
    assert "Build" in diff and "pgxact-split.patch" in diff


def test_it_names_the_patch_in_the_differences_of_a_comparison(agent):
    base = provenance(key="a" * 24)
    patch = {"name": "pgxact-split.patch", "sha256": SHA}
    for name, prov in (
        ("master@1a2b3c4", base),
        ("master+pgxact-split", {**base, "key": "b" * 24, "patches": [patch]}),
        ("14.0", None),
    ):
        run_aggregate(run_id=Run.objects.get(uuid=upload(agent, name, prov)["run_uuid"]).id)
    comparison = comparison_get(
        workload="select-only", host="bench-01", versions=["master@1a2b3c4", "master+pgxact-split"]
    )
    by_name = {d.name: d for d in comparison.differences}
    assert by_name["build"].details == [
        "master+pgxact-split: patches = pgxact-split.patch (sha256 11df0df97fe3) "
        "(baseline master@1a2b3c4: none)"
    ]
    assert "with patches pgxact-split.patch" in dict(by_name["build"].values)["master+pgxact-split"]
    # A packaged release against a build from source says which is which.
    mixed = comparison_get(
        workload="select-only", host="bench-01", versions=["14.0", "master@1a2b3c4"]
    )
    line = {d.name: d for d in mixed.differences}["build"].details[0]
    assert line.startswith("master@1a2b3c4: built from source with configure --enable-debug")
    assert line.endswith("(baseline 14.0: a packaged or installed release)")
