"""Build recipes through the API: define, list, read, upload patches; who may; bad input."""

import hashlib
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from benchhub.accounts.services import personal_token_create
from benchhub.builds.models import Patch, Recipe
from benchhub.testing.spellings import PRIVATE_SPELLINGS

SHA = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"
PATCH = "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-PostgreSQL\n+PostgreSQL, patched\n"
RECIPE: dict[str, Any] = {
    "name": "15.18+slow-commit",
    "base": "15.18",
    "source": {
        "kind": "tarball",
        "url": "https://example.org/postgresql-15.18.tar.bz2",
        "sha256": SHA,
    },
    "configure_flags": ["--enable-debug", "--with-extra-version=-bench"],
    "cflags": "-O2 -fno-omit-frame-pointer",
    "contrib": ["pg_stat_statements", "pg_prewarm"],
    "patches": [{"name": "slow-commit.patch", "text": PATCH}],
}


@pytest.fixture
def alice_client(alice):
    client = APIClient()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def test_it_defines_a_recipe_with_its_patches_and_reads_it_back(alice_client, anon_client):
    response = alice_client.post("/api/v1/recipes/", RECIPE, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "15.18+slow-commit" and body["base"] == "15.18"
    assert body["source"] == RECIPE["source"]
    assert body["contrib"] == ["pg_stat_statements", "pg_prewarm"]
    assert body["created_by"] == "alice"
    [patch] = body["patches"]
    assert patch["position"] == 1 and patch["name"] == "slow-commit.patch"
    assert patch["sha256"] == hashlib.sha256(PATCH.encode()).hexdigest()
    assert patch["size"] == len(PATCH.encode())
    listed = anon_client.get("/api/v1/recipes/").json()
    assert [r["name"] for r in listed] == ["15.18+slow-commit"]
    detail = anon_client.get("/api/v1/recipes/15.18+SLOW-COMMIT/")
    assert detail.status_code == 200 and detail.json()["cflags"] == RECIPE["cflags"]
    assert anon_client.get("/api/v1/recipes/nope/").status_code == 404


def test_it_lists_a_patched_build_right_after_its_base(alice_client):
    git = {"kind": "git", "url": "https://git.example.org/pg.git"}
    for name, base, source in [
        ("master+pgxact-split", "master@1a2b3c4", {**git, "ref": "master"}),
        ("master@1a2b3c4", "", {**git, "ref": "1a2b3c4"}),
        ("14beta1", "", {"kind": "release", "version": "14beta1"}),
        ("9.6.24", "", {"kind": "release", "version": "9.6.24"}),
        (
            "14devel-2021-05-01",
            "",
            {**git, "url": "git://x/pg.git", "branch": "master", "date": "2021-05-01"},
        ),
    ]:
        response = alice_client.post(
            "/api/v1/recipes/", {"name": name, "base": base, "source": source}, format="json"
        )
        assert response.status_code == 201, response.content

    names = [r["name"] for r in alice_client.get("/api/v1/recipes/").json()]

    assert names == [
        "9.6.24",
        "14devel-2021-05-01",
        "14beta1",
        "master@1a2b3c4",
        "master+pgxact-split",
    ]
    snapshot = Recipe.objects.get(name="14devel-2021-05-01")
    assert snapshot.snapshot_date.isoformat() == "2021-05-01"


def test_it_lets_only_staff_or_holders_of_the_permission_define_recipes(bob, bob_client, agent):
    refused = bob_client.post("/api/v1/recipes/", RECIPE, format="json")
    assert refused.status_code == 403
    assert "builds.add_recipe permission" in refused.json()["detail"]
    assert agent.client.get("/api/v1/recipes/").status_code == 403
    assert Recipe.objects.count() == 0

    bob.user_permissions.add(Permission.objects.get(codename="add_recipe"))
    client = APIClient()
    client.force_login(bob)
    assert client.post("/api/v1/recipes/", RECIPE, format="json").status_code == 201


def test_it_refuses_a_recipe_from_a_token_without_the_queue_scope(alice):
    _, token = personal_token_create(user=alice, name="r", scopes=["read"])
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    refused = script.post("/api/v1/recipes/", RECIPE, format="json")
    assert refused.status_code == 403
    assert "lacks the 'queue' scope" in refused.json()["detail"]
    assert script.get("/api/v1/recipes/").status_code == 200
    assert Recipe.objects.count() == 0


def test_it_refuses_a_name_that_is_taken(alice_client):
    assert alice_client.post("/api/v1/recipes/", RECIPE, format="json").status_code == 201
    again = alice_client.post(
        "/api/v1/recipes/", {**RECIPE, "name": "15.18+SLOW-commit"}, format="json"
    )
    assert again.status_code == 409
    assert again.json()["fields"] == {"name": ["A recipe named 15.18+SLOW-commit exists already."]}


GIT = {"kind": "git", "url": "https://x/pg.git"}


def _with_source(**source):
    return {**RECIPE, "source": {**RECIPE["source"], **source}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "pgxact-split"}, "name"),
        ({"name": "14"}, "name"),
        ({"base": "not a version"}, "base"),
        (_with_source(url="ftp://example.org/pg.tar.bz2"), "source.url"),
        (_with_source(url="http://example.org/pg.tar.bz2"), "source.url"),
        (_with_source(sha256="abc"), "source.sha256"),
        (_with_source(path="/srv/pg.tar.bz2"), "source.url"),
        (_with_source(mirror="x"), "source.mirror"),
        ({"source": {"kind": "svn", "url": "https://x"}}, "source.kind"),
        ({"source": {**GIT, "ref": "a", "branch": "b"}}, "source.ref"),
        ({"source": {**GIT, "branch": "b", "date": "2021-02-30"}}, "source.date"),
        ({"source": {**GIT, "url": "ssh://x/pg.git", "ref": "master"}}, "source.url"),
        ({"source": {"kind": "release", "version": "master"}}, "source.version"),
        ({"configure_flags": ["--enable-debug", "--with-x=$(id)"]}, "configure_flags[1]"),
        ({"configure_flags": ["--enable-debug; rm -rf /"]}, "configure_flags[0]"),
        ({"configure_flags": ["--prefix=/tmp/x"]}, "configure_flags[0]"),
        ({"configure_flags": ["CC=evil"]}, "configure_flags[0]"),
        ({"cflags": "-O2 `id`"}, "cflags"),
        ({"cflags": "-O2 -DX='1'"}, "cflags"),
        ({"contrib": ["pg_stat_statements", "../x"]}, "contrib[1]"),
        ({"patches": [{"name": "../evil.patch", "text": PATCH}]}, "patches[0].name"),
        ({"patches": [{"name": "a.patch", "text": "  "}]}, "patches[0]"),
        ({"configure_flags": "--enable-debug"}, "configure_flags"),
    ],
)
def test_it_refuses_bad_input_naming_the_field_and_writes_nothing(alice_client, change, field):
    response = alice_client.post("/api/v1/recipes/", {**RECIPE, **change}, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert Recipe.objects.count() == 0 and Patch.objects.count() == 0


def _private_sources() -> list[dict]:
    """A tarball url, a git:// url and a git https url on every refused spelling."""
    sources = []
    for host in PRIVATE_SPELLINGS:
        sources.append(_with_source(url=f"https://{host}/pg.tar.bz2")["source"])
        sources.append({**GIT, "url": f"git://{host}:9418/pg.git", "ref": "master"})
        sources.append({**GIT, "url": f"https://{host}/pg.git", "ref": "master"})
    return sources


@pytest.mark.parametrize("source", _private_sources(), ids=lambda s: s["url"])
def test_it_refuses_a_source_on_a_private_address_unless_the_server_allows_it(
    alice_client, settings, source
):
    response = alice_client.post("/api/v1/recipes/", {**RECIPE, "source": source}, format="json")

    assert response.status_code == 400, response.content
    [message] = response.json()["fields"]["source.url"]
    assert "not a public address" in message and "BENCHHUB_SOURCES_ALLOW_PRIVATE" in message
    assert not Recipe.objects.exists()

    settings.BENCHHUB_SOURCES_ALLOW_PRIVATE = True
    response = alice_client.post("/api/v1/recipes/", {**RECIPE, "source": source}, format="json")
    assert response.status_code == 201, response.content


def test_it_appends_an_uploaded_patch_file(alice_client, bob_client):
    alice_client.post("/api/v1/recipes/", RECIPE, format="json")
    second = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

    response = alice_client.post(
        "/api/v1/recipes/15.18+slow-commit/patches/",
        {"file": SimpleUploadedFile("second.patch", second)},
        format="multipart",
    )

    assert response.status_code == 201, response.content
    patches = response.json()["patches"]
    assert [(p["position"], p["name"]) for p in patches] == [
        (1, "slow-commit.patch"),
        (2, "second.patch"),
    ]
    assert patches[1]["sha256"] == hashlib.sha256(second).hexdigest()
    stored = Patch.objects.get(name="second.patch")
    assert stored.text.encode() == second
    again = alice_client.post(
        "/api/v1/recipes/15.18+slow-commit/patches/",
        {"file": SimpleUploadedFile("second.patch", second)},
        format="multipart",
    )
    assert again.status_code == 400 and "name" in again.json()["fields"]
    latin1 = alice_client.post(
        "/api/v1/recipes/15.18+slow-commit/patches/",
        {"file": SimpleUploadedFile("latin.patch", "caf\u00e9".encode("latin-1"))},
        format="multipart",
    )
    assert latin1.status_code == 400 and "file" in latin1.json()["fields"]
    refused = bob_client.post(
        "/api/v1/recipes/15.18+slow-commit/patches/",
        {"file": SimpleUploadedFile("third.patch", second)},
        format="multipart",
    )
    assert refused.status_code == 403
    assert Patch.objects.count() == 2


def test_it_lists_recipes_in_a_fixed_number_of_queries(alice, django_assert_num_queries):
    from benchhub.builds.selectors import recipe_list
    from benchhub.builds.services import PatchIn, recipe_create

    for n in range(3):
        recipe_create(
            name=f"15.18+p{n}",
            source={"kind": "release", "version": "15.18"},
            patches=[PatchIn(name=f"p{i}.patch", content=PATCH.encode()) for i in range(n + 1)],
            created_by=alice,
        )
    with django_assert_num_queries(2):
        rows = [(r.name, r.created_by.username, [p.name for p in r.patches.all()])
                for r in recipe_list()]  # fmt: skip
    assert rows[2] == ("15.18+p2", "alice", ["p0.patch", "p1.patch", "p2.patch"])
