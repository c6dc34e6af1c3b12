"""The recipes page: lists recipes, and lets those with the right define one with patches."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from benchhub.builds.models import Recipe

SHA = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"
PATCH = b"--- a/README\n+++ b/README\n@@ -1 +1 @@\n-PostgreSQL\n+PostgreSQL, patched\n"


def form(**changes):
    data = {
        "name": "15.18+slow-commit",
        "base": "15.18",
        "kind": "tarball",
        "path": "/srv/postgresql-15.18.tar.bz2",
        "sha256": SHA,
        "configure_flags": "--enable-debug",
        "contrib": "pg_stat_statements, pg_prewarm",
        "patches": [SimpleUploadedFile("slow-commit.patch", PATCH)],
    }
    data.update(changes)
    return data


def test_it_defines_a_recipe_with_a_patch_file_from_the_page(alice):
    client = Client()
    client.force_login(alice)

    response = client.post("/recipes/", form())

    assert response.status_code == 302, response.content.decode()[:3000]
    recipe = Recipe.objects.get()
    assert (recipe.source_kind, recipe.path, recipe.sha256) == (
        "tarball",
        "/srv/postgresql-15.18.tar.bz2",
        SHA,
    )
    assert recipe.contrib == ["pg_stat_statements", "pg_prewarm"]
    assert [p.name for p in recipe.patches.all()] == ["slow-commit.patch"]
    page = client.get("/recipes/").content.decode()
    assert "15.18+slow-commit" in page and "slow-commit.patch" in page


def test_it_shows_the_field_at_fault_and_writes_nothing(alice):
    client = Client()
    client.force_login(alice)

    response = client.post("/recipes/", form(configure_flags="--enable-debug --with-x=$(id)"))

    assert response.status_code == 200
    assert "is not a configure switch" in response.content.decode()
    assert Recipe.objects.count() == 0


def test_it_shows_the_list_but_no_form_to_those_without_the_right(bob):
    anon = Client().get("/recipes/").content.decode()
    assert "Sign in</a> to define recipes" in anon
    client = Client()
    client.force_login(bob)
    page = client.get("/recipes/").content.decode()
    assert "builds.add_recipe" in page and 'name="sha256"' not in page
    assert client.post("/recipes/", form()).status_code == 200
    assert Recipe.objects.count() == 0


def test_the_job_page_shows_its_builds_and_a_failed_build_with_its_log_tail(alice, agent):
    client = Client()
    client.force_login(alice)
    assert client.post("/recipes/", form()).status_code == 302
    job = {
        "versions": ["14", "15.18+slow-commit"],
        "workload": {"name": "select-only", "builtin": "select-only"},
        "clients": [1],
        "duration_s": 2,
    }
    queued = client.post("/api/v1/jobs/", job, content_type="application/json").json()
    assert agent.client.post("/api/v1/jobs/claim/").status_code == 200
    hunk = "+static void CommitTransactionRenamed(void);"
    message = (
        "15.18+slow-commit: build failed at patch: slow-commit.patch does not apply; "
        f"rejected hunks:\n@@ -214,7 +214,7 @@\n-static void CommitTransaction(void);\n{hunk}"
    )
    finished = agent.client.post(
        f"/api/v1/jobs/{queued['id']}/finish/",
        {"outcome": "failed", "stage": "build", "message": message},
        format="json",
    )
    assert finished.status_code == 200, finished.content

    page = client.get(f"/jobs/{queued['id']}/").content.decode()

    assert 'id="job-builds"' in page and "slow-commit.patch" in page
    assert "at build" in page
    assert "static void CommitTransactionRenamed(void);" in page
