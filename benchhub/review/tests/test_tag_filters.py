"""Tags that filter: runs tagged in review narrow the runs API, the run list at home, a
comparison (the runs standing for the versions and their sets) and a history, by `?tag=`
repeated or comma-separated, every tag required."""

import re

import pytest
from django.contrib.auth import get_user_model

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Run
from benchhub.review.keys import comparison_key
from benchhub.review.services import run_tag_add

COMPARE = "workload=select-only&host=bench-01&versions=13.3,15.4"
HISTORY = "/history/?host=bench-01&workload=select-only&clients=1"


@pytest.fixture
def carol(db):
    return get_user_model().objects.create_user("carol")


def tag(run: Run, *names: str, actor) -> Run:
    for name in names:
        run_tag_add(run=run, name=name, actor=actor)
    return run


@pytest.fixture
def runs(agent, carol) -> dict[str, Run]:
    """Per version an older run tagged `reviewed` and a newer untagged one, which would stand
    for the version and join its set without the filter; 13.3's reviewed run is `nightly` too."""
    made = {
        "13.3 reviewed": upload(
            agent, version="13.3", tps={1: [100, 102]}, started_at="2026-11-01T10:00:00Z"
        ),
        "13.3 new": upload(
            agent, version="13.3", tps={1: [300, 302]}, started_at="2026-11-05T10:00:00Z"
        ),
        "15.4 reviewed": upload(
            agent, version="15.4", tps={1: [200, 202]}, started_at="2026-11-02T10:00:00Z"
        ),
        "15.4 new": upload(
            agent, version="15.4", tps={1: [900, 902]}, started_at="2026-11-06T10:00:00Z"
        ),
    }
    tag(made["13.3 reviewed"], "reviewed", "nightly", actor=carol)
    tag(made["15.4 reviewed"], "reviewed", actor=carol)
    return made


def _uuids(*runs: Run) -> set[str]:
    return {str(run.uuid) for run in runs}


def test_the_runs_api_lists_only_runs_carrying_every_tag(client, runs):
    def listed(query: str) -> set[str]:
        response = client.get(f"/api/v1/runs/?{query}")
        assert response.status_code == 200, response.content
        return {run["run_uuid"] for run in response.json()["results"]}

    assert listed("") == _uuids(*runs.values())
    assert listed("tag=reviewed") == _uuids(runs["13.3 reviewed"], runs["15.4 reviewed"])
    both = _uuids(runs["13.3 reviewed"])
    assert listed("tag=reviewed&tag=nightly") == both
    assert listed("tag=reviewed,nightly") == both
    assert listed("tag=nightly&tag=reviewed,nightly") == both
    assert listed("tag=nobody-uses-this") == set()
    assert listed("tag=reviewed&version=15.4") == _uuids(runs["15.4 reviewed"])


@pytest.mark.parametrize(
    "query", ["tag=" + ",".join(f"t{i}" for i in range(11)), "tag=" + "x" * 51]
)
def test_the_runs_api_names_a_tag_filter_past_its_bounds(client, db, query):
    response = client.get(f"/api/v1/runs/?{query}")
    assert response.status_code == 400
    assert "tag" in response.json()["fields"], response.json()


def test_the_run_list_shows_only_tagged_runs_and_each_runs_tags(client, runs):
    html = client.get("/?tag=reviewed").content.decode()
    shown = html.split('id="runs-title"')[1]
    for name, run in runs.items():
        assert (f"/runs/{run.uuid}/" in shown) == name.endswith("reviewed"), name
    assert 'href="/?tag=nightly">nightly</a>' in shown
    assert 'value="reviewed"' in shown  # the filter keeps what was asked
    none = client.get("/?tag=reviewed&tag=absent").content.decode()
    assert 'id="no-tagged-runs"' in none
    assert not any(f"/runs/{run.uuid}/" in none for run in runs.values())
    refused = client.get("/?tag=" + "x" * 51).content.decode()
    assert 'id="run-tag-problem"' in refused and "at most 50 characters" in refused


def test_only_tagged_runs_enter_the_comparison(client, runs):
    everything = client.get(f"/api/v1/compare/?{COMPARE}").json()
    assert [s["run"] for s in everything["series"]] == [
        str(runs["13.3 new"].uuid),
        str(runs["15.4 new"].uuid),
    ]
    assert set(everything["series"][0]["pooled_runs"]) == _uuids(
        runs["13.3 new"], runs["13.3 reviewed"]
    )
    tagged = client.get(f"/api/v1/compare/?{COMPARE}&tag=reviewed").json()
    assert [(s["run"], s["pooled_runs"]) for s in tagged["series"]] == [
        (str(runs["13.3 reviewed"].uuid), [str(runs["13.3 reviewed"].uuid)]),
        (str(runs["15.4 reviewed"].uuid), [str(runs["15.4 reviewed"].uuid)]),
    ]
    # Both tags: 15.4 has no run carrying them, and the comparison says so.
    narrowed = client.get(f"/api/v1/compare/?{COMPARE}&tag=reviewed&tag=nightly").json()
    assert [s["version"] for s in narrowed["series"]] == ["13.3"]
    assert narrowed["missing"] == ["15.4"]


def test_the_compare_page_filters_by_tag_and_keeps_it_in_its_links(client, runs):
    html = client.get(f"/compare/?{COMPARE}&tag=reviewed").content.decode()
    assert f"/runs/{runs['13.3 reviewed'].uuid}/" in html
    assert f"/runs/{runs['13.3 new'].uuid}/" not in html
    assert 'name="tag" id="id_tag" value="reviewed"' in html
    permalink = COMPARE.replace("&", "&amp;") + "&amp;tag=reviewed"
    assert f'id="permalink" href="/compare/?{permalink}"' in html
    # The history of the series keeps the tag.
    history = re.search(r'<a href="(/history/[^"]*)">History of this series</a>', html)
    assert history is not None
    assert "tag=reviewed" in history[1].split("&amp;")
    # A comparison of tagged runs is another comparison: its own thread.
    assert comparison_key(f"?{COMPARE}&tag=reviewed") != comparison_key(f"?{COMPARE}")


def test_the_compare_page_names_a_tag_filter_past_its_bounds(client, runs):
    html = client.get(f"/compare/?{COMPARE}&tag={'x' * 51}").content.decode()
    assert "<strong>tag</strong>" in html


def test_history_shows_only_tagged_runs(client, runs):
    def points(query: str) -> set[str]:
        html = client.get(f"{HISTORY}{query}").content.decode()
        return {str(run.uuid) for run in runs.values() if f"/runs/{run.uuid}/" in html}

    assert points("") == _uuids(*runs.values())
    assert points("&tag=reviewed") == _uuids(runs["13.3 reviewed"], runs["15.4 reviewed"])
    assert points("&tag=reviewed,nightly") == _uuids(runs["13.3 reviewed"])
    html = client.get(f"{HISTORY}&tag={'x' * 51}")
    assert html.status_code == 400 and "<strong>tag</strong>" in html.content.decode()
