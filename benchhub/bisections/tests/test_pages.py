"""The bisection pages: the form (prefilled from the compare page's "find the commit" link)
starts one, and the page of a running one refreshes itself and offers Cancel."""

import copy
from urllib.parse import parse_qs, urlsplit

from benchhub.bisections.models import Bisection
from benchhub.bisections.tests.conftest import URL, sha
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
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


def _git_run(agent, version: str, commit: str) -> Run:
    provenance = {
        "name": version,
        "key": commit[:24],
        "version": "18devel",
        "source": {"kind": "git", "repository": URL, "ref": commit, "commit": commit},
    }
    build = {"version": version, "origin": "source", "commit": commit, "provenance": provenance}
    payload = run_payload(version=version, build=copy.deepcopy(build), server_version="18devel")
    response = agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.pk)
    return run


def test_the_compare_page_offers_to_find_the_commit(bob, recipe, agent, client):
    good, bad = sha("good"), sha("bad")
    _git_run(agent, f"master@{good[:12]}", good)
    _git_run(agent, f"master@{bad[:12]}", bad)
    client.force_login(bob)
    page = client.get(
        f"/compare/?workload=select-only&host=bench-01&versions=master@{good[:12]},master@{bad[:12]}"
    ).content.decode()
    assert 'id="find-commit"' in page
    start = page.index('id="find-commit" href="') + len('id="find-commit" href="')
    link = page[start : page.index('"', start)].replace("&amp;", "&")
    query = parse_qs(urlsplit(link).query)
    assert query == {"good": [good], "bad": [bad], "host": ["bench-01"], "recipe": ["master"]}
