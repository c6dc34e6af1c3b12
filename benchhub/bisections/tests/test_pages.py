"""The bisection pages: the form (prefilled from the compare page's "find the commit" link)
starts one, and the page of a running one refreshes itself and offers Cancel."""

import math
from urllib.parse import parse_qs, urlsplit

from benchhub.bisections.models import Bisection
from benchhub.bisections.tests.conftest import git_run, regression_between, sha
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload


def test_it_starts_one_from_the_form(bob, recipe, agent, client):
    client.force_login(bob)
    form = client.get("/bisections/new/?good=REL_15_0&bad=master&host=bench-01")
    assert form.status_code == 200
    assert 'value="REL_15_0"' in form.content.decode()
    response = client.post(
        "/bisections/new/",
        {
            "recipe": "master",
            "good": "REL_15_0",
            "bad": "master",
            "host": "bench-01",
            "builtin": "select-only",
            "query_mode": "prepared",
            "clients": 4,
            "duration_s": 5,
            "repeats": 3,
        },
    )
    bisection = Bisection.objects.get()
    assert response.status_code == 302 and response.url == f"/bisections/{bisection.pk}/"
    page = client.get(response.url).content.decode()
    assert '<meta http-equiv="refresh" content="10">' in page
    assert f"/bisections/{bisection.pk}/cancel/" in page
    client.post(f"/bisections/{bisection.pk}/cancel/")
    bisection.refresh_from_db()
    assert bisection.state == "cancelled"
    assert "refresh" not in client.get(response.url).content.decode()


def test_the_form_shows_the_apis_refusals(bob, recipe, agent, client):
    client.force_login(bob)
    response = client.post(
        "/bisections/new/",
        {"recipe": "master", "good": "a..b", "bad": "master", "host": "bench-01",
         "builtin": "select-only", "clients": 4, "duration_s": 5, "repeats": 3},
    )  # fmt: skip
    assert response.status_code == 200
    assert "letters, digits" in response.content.decode()
    assert not Bisection.objects.exists()


def _link(page: str, anchor: str = 'id="find-commit" href="') -> str:
    start = page.index(anchor) + len(anchor)
    return page[start : page.index('"', start)].replace("&amp;", "&")


def test_the_compare_page_starts_one_from_its_two_runs(bob, recipe, agent, client):
    good, bad = sha("good"), sha("bad")
    good_run = git_run(agent, good, {1: 1000.0, 8: 8000.0, 32: 20000.0})
    bad_run = git_run(agent, bad, {1: 990.0, 8: 6000.0, 32: 21000.0})
    client.force_login(bob)
    page = client.get(
        f"/compare/?workload=select-only&host=bench-01&versions=master@{good[:12]},master@{bad[:12]}"
    ).content.decode()
    link = _link(page)
    assert parse_qs(urlsplit(link).query) == {
        "good_run": [str(good_run.uuid)],
        "bad_run": [str(bad_run.uuid)],
    }
    form = client.get(link).content.decode()
    # Prefilled from the runs: their commits, and the level where they differ most (8: -25%).
    for value in (good, bad, "bench-01", "8", "0.75"):
        assert f'value="{value}"' in form, value
    assert 'id="origin"' in form and 'name="builtin"' not in form
    response = client.post(
        "/bisections/new/",
        {
            "recipe": "master", "good": good, "bad": bad, "host": "bench-01", "clients": 8,
            "repeats": 3, "change": 0.75, "good_run": str(good_run.uuid),
            "bad_run": str(bad_run.uuid), "regression": "",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()
    bisection = Bisection.objects.get()
    assert (bisection.good_run, bisection.bad_run, bisection.regression) == (
        good_run,
        bad_run,
        None,
    )
    # Measured as the good run was.
    assert bisection.workload["name"] == "select-only" and bisection.duration_s == 2.0
    assert bisection.clients == 8 and math.isclose(bisection.change or 0, 0.75)
    page = client.get(response.url).content.decode()
    assert f"/compare/?runs={good_run.uuid},{bad_run.uuid}" in page


def test_a_regression_page_starts_one(bob, recipe, agent, client):
    before = git_run(agent, sha("good"), {1: 1000.0, 4: 4000.0})
    after = git_run(agent, sha("bad"), {1: 1000.0, 4: 3600.0})
    regression = regression_between(before, after, clients=4, before_tps=4000.0, after_tps=3600.0)
    client.force_login(bob)
    link = _link(client.get(f"/regressions/{regression.pk}/").content.decode())
    assert link == f"/bisections/new/?regression={regression.pk}"
    form = client.get(link).content.decode()
    assert f'/regressions/{regression.pk}/"' in form
    for value in (sha("good"), sha("bad"), "4", "0.9"):
        assert f'value="{value}"' in form, value
    response = client.post(
        "/bisections/new/",
        {
            "recipe": "master", "good": sha("good"), "bad": sha("bad"), "host": "bench-01",
            "clients": 4, "repeats": 3, "change": 0.9, "regression": regression.pk,
        },
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()
    bisection = Bisection.objects.get()
    assert bisection.regression == regression and bisection.good_run == before
    page = client.get(response.url).content.decode()
    assert f"/regressions/{regression.pk}/" in page


def test_a_regression_between_releases_offers_no_bisection(bob, agent, client):
    runs = []
    for version in ("14.9", "14.10"):
        payload = run_payload(version=version)
        assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
        runs.append(Run.objects.get(uuid=payload["run_uuid"]))
    regression = regression_between(*runs, clients=1, before_tps=1000.0, after_tps=900.0)
    client.force_login(bob)
    assert "find-commit" not in client.get(f"/regressions/{regression.pk}/").content.decode()
    form = client.get(f"/bisections/new/?regression={regression.pk}").content.decode()
    assert "which was not built from a git commit" in form
    for bad in ("99999999999999999999999", "x"):
        page = client.get(f"/bisections/new/?regression={bad}")
        assert page.status_code == 200 and 'id="origin-problem"' in page.content.decode()
