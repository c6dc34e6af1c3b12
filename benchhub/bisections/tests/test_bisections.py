"""Bisections through the API: create (who may, what is refused), the listing job and its range,
the steps over faked measurements (found, skipped build, more repeats, narrowed), cancel, and
the page."""

import copy
import math
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.bisections.models import Bisection, BisectionCommit
from benchhub.bisections.services import bisection_advance, step_version
from benchhub.bisections.tasks import advance_idle
from benchhub.bisections.tests.conftest import REQUEST, URL, Play, linear_range, sha
from benchhub.builds.services import recipe_create
from benchhub.builds.versions import version_parse
from benchhub.hosts.models import Host
from benchhub.jobs.models import Job
from benchhub.jobs.services import jobs_expire_leases

GOOD_TPS, BAD_TPS = 1000.0, 800.0


def client_of(person) -> APIClient:
    client = APIClient()
    client.force_authenticate(person)
    return client


def create(person, **changes):
    body = {**copy.deepcopy(REQUEST), **changes}
    return client_of(person).post("/api/v1/bisections/", body, format="json")


@pytest.fixture
def host(agent):
    return Host.objects.get(name=agent.host_name)


def slow_from(index: int):
    """tps of a range where commit `index` (and every later one) is slower."""
    slow = {sha(f"c{i}") for i in range(index, 50)}
    return lambda commit: BAD_TPS if commit in slow else GOOD_TPS


# --- create ----------------------------------------------------------------------------------


def test_it_queues_the_listing_job(bob, recipe, host):
    response = create(bob)
    assert response.status_code == 201, response.content
    bisection = Bisection.objects.get()
    assert (bisection.state, bisection.clients, bisection.repeats) == ("listing", 8, 3)
    job = Job.objects.get()
    assert job.bisection == bisection and job.host == host
    assert job.bisect_range == {"url": URL, "good": "REL_15_0", "bad": "master"}
    assert job.versions == ["master"] and job.clients == [8]


def test_it_names_each_field_it_refuses(bob, recipe, host):
    response = create(bob, clients=0, repeats=1, change=1.0)
    assert response.status_code == 400
    assert {"clients", "repeats", "change"} <= set(response.json()["fields"])
    response = create(bob, good="bad..ref", bad="x.lock")
    assert {"good", "bad"} <= set(response.json()["fields"])
    response = create(bob, recipe="nope", host="no-such-host")
    assert set(response.json()["fields"]) >= {"recipe", "host"}
    response = create(bob, max_repeats=31)
    assert "max_repeats" in response.json()["fields"]
    response = create(bob, duration_s=None, transactions_per_client=100)
    assert "duration_s" in response.json()["fields"]


def test_it_refuses_a_recipe_that_is_not_git(bob, alice, host):
    recipe_create(name="15.18+x", source={"kind": "release", "version": "15.18"}, created_by=alice)
    response = create(bob, recipe="15.18+x")
    assert response.status_code == 400
    assert "git repository" in response.json()["fields"]["recipe"][0]
    assert not Bisection.objects.exists()


def test_it_refuses_a_person_without_the_right_to_run_on_the_host(mallory, recipe, host):
    response = create(mallory)
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden_host"
    assert not Bisection.objects.exists() and not Job.objects.exists()


def test_the_command_line_starts_one(recipe, host, capsys):
    call_command(
        "bisection_create",
        "--recipe=master",
        "--good=REL_15_0",
        "--bad=master",
        "--host=bench-01",
        "--clients=4",
        "--duration=5",
    )
    bisection = Bisection.objects.get()
    assert str(bisection.pk) == capsys.readouterr().out.strip()
    assert bisection.jobs.get().bisect_range["bad"] == "master"


# --- the range --------------------------------------------------------------------------------


def test_the_range_is_stored_and_the_ends_are_queued(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(4)
    play = Play(agent, tps=lambda commit: GOOD_TPS)
    listing = play.list_range(good, commits)
    bisection = Bisection.objects.get()
    assert (bisection.state, bisection.good_sha, bisection.bad_sha) == (
        "running",
        good,
        commits[0]["sha"],
    )
    stored = list(bisection.commits.values_list("position", "sha", "parents"))
    assert stored[0] == (0, commits[0]["sha"], [commits[1]["sha"]])
    assert len(stored) == 4
    assert Job.objects.get(pk=listing["id"]).state == "done"
    ends = Job.objects.filter(bisection=bisection, state="queued").get()
    assert ends.versions == [
        step_version(recipe_name="master", sha=good),
        step_version(recipe_name="master", sha=commits[0]["sha"]),
    ]
    assert ends.builds[ends.versions[0]]["source"] == {"kind": "git", "url": URL, "ref": good}
    assert ends.builds[ends.versions[0]]["name"] == ends.versions[0]


def test_the_range_is_bounded_at_the_edge(bob, recipe, agent):
    create(bob)
    play = Play(agent, tps=lambda commit: GOOD_TPS)
    job = play.claim()
    good, commits = linear_range(3)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"commits": []}, "commits"),
        ({"good": "abc"}, "good"),
        ({"commits": [{**commits[0], "sha": "XYZ"}, *commits[1:]]}, "commits"),
        ({"commits": [{**commits[0], "parents": ["a" * 40] * 65}, *commits[1:]]}, "commits"),
        ({"commits": [{**commits[0], "files": ["f"] * 101}, *commits[1:]]}, "commits"),
        ({"commits": [{**commits[0], "subject": "s" * 201}, *commits[1:]]}, "commits"),
        ({"commits": [commits[0]] * 5001}, "commits"),
        ({"bad": commits[1]["sha"]}, "commits[0]"),
    ]
    assert job is not None
    for change, field in cases:
        body: dict[str, Any] = {"attempt": job["attempt"], "good": good, "bad": commits[0]["sha"]}
        body["commits"] = commits
        body.update(change)
        response = agent.client.post(f"/api/v1/jobs/{job['id']}/range/", body, format="json")
        assert response.status_code == 400, (change, response.content)
        assert field in response.json()["fields"], response.json()
    response = agent.client.post(
        f"/api/v1/jobs/{job['id']}/range/",
        {"attempt": job["attempt"], "good": good, "bad": commits[0]["sha"], "commits": commits},
        format="json",
    )
    assert response.status_code == 201
    assert Bisection.objects.get().commits.count() == 3


def test_a_listing_job_is_done_only_with_its_range(bob, recipe, agent):
    create(bob)
    job = Play(agent, tps=lambda commit: GOOD_TPS).claim()
    assert job is not None
    response = agent.client.post(
        f"/api/v1/jobs/{job['id']}/finish/", {"outcome": "done"}, format="json"
    )
    assert response.status_code == 409


def test_a_listing_that_fails_fails_the_bisection(bob, recipe, agent):
    create(bob)
    play = Play(agent, tps=lambda commit: GOOD_TPS)
    job = play.claim()
    assert job is not None
    play.finish(job, stage="resolve", message="'nope' is not a commit, tag or branch")
    bisection = bisection_advance(bisection_id=Bisection.objects.get().pk)
    assert bisection.state == "failed"
    assert "resolve" in bisection.message and "nope" in bisection.message


# --- advance ----------------------------------------------------------------------------------


def test_it_finds_the_first_slow_commit(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(8)
    play = Play(agent, tps=slow_from(5))
    play.list_range(good, commits)
    bisection = play.until_done()
    assert bisection.state == "found", bisection.message
    assert bisection.culprit == sha("c5")
    assert math.isclose(bisection.change_used or 0, BAD_TPS / GOOD_TPS, rel_tol=0.01)
    measured = bisection.commits.exclude(step=None).exclude(position=0)
    assert 1 <= measured.count() <= 3
    assert len(play.jobs) == 1 + measured.count()  # the ends, then one job per step


def test_a_commit_that_does_not_build_is_skipped(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(8)
    # The search's first step is c3 (the middle); c3's build fails.
    play = Play(agent, tps=slow_from(5), failing={sha("c3")})
    play.list_range(good, commits)
    bisection = play.until_done()
    assert bisection.state == "found", bisection.message
    assert bisection.culprit == sha("c5")
    skipped = bisection.commits.get(sha=sha("c3"))
    assert skipped.verdict == "skipped" and "build" in skipped.reason


def test_an_unknown_commit_gets_more_repeats_then_is_skipped(bob, recipe, agent):
    create(bob, max_repeats=6)
    good, commits = linear_range(2)  # c1 (bad end), c0
    half = math.sqrt(GOOD_TPS * BAD_TPS)  # half of the change on the log scale

    def tps(commit):
        return {sha("c1"): BAD_TPS, sha("c0"): half}.get(commit, GOOD_TPS)

    play = Play(agent, tps=tps)
    play.list_range(good, commits)
    bisection = play.until_done()
    c0 = bisection.commits.get(sha=sha("c0"))
    assert c0.repeats == 6 and c0.verdict == "skipped", c0.reason
    assert "still unknown after 6 repeats" in c0.reason
    c0_jobs = [
        j for j in play.jobs if j["versions"] == [step_version(recipe_name="master", sha=sha("c0"))]
    ]
    assert len(c0_jobs) == 2
    assert bisection.state == "narrowed"
    assert sha("c0")[:12] in bisection.message and sha("c1")[:12] in bisection.message


def test_a_step_whose_lease_runs_out_is_skipped(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(8)
    play = Play(agent, tps=slow_from(5))
    play.list_range(good, commits)
    play.step()  # the ends
    job = play.claim()
    assert job is not None and job["builds"][job["versions"][0]]["source"]["ref"] == sha("c3")
    Job.objects.filter(pk=job["id"]).update(
        attempt=3, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert jobs_expire_leases() == 1
    bisection = bisection_advance(bisection_id=Bisection.objects.get().pk)
    assert bisection is not None and bisection.state == "running"
    c3 = bisection.commits.get(sha=sha("c3"))
    assert c3.verdict == "skipped" and "expired" in c3.reason
    assert Job.objects.filter(state="queued").count() == 1  # the search goes on around it


def test_ends_without_a_change_fail(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(4)
    play = Play(agent, tps=lambda commit: GOOD_TPS)
    play.list_range(good, commits)
    bisection = play.until_done()
    assert bisection.state == "failed"
    assert "nothing to look for" in bisection.message


def test_an_advance_lost_with_the_broker_is_made_up_by_the_sweep(bob, recipe, agent):
    create(bob)
    good, commits = linear_range(8)
    play = Play(agent, tps=slow_from(5))
    play.list_range(good, commits)
    play.step(advance=False)  # the two ends measured; their job's advance never ran
    assert not Job.objects.filter(state="queued").exists()
    assert advance_idle() == 1
    step = Job.objects.get(state="queued")
    assert step.versions == [step_version(recipe_name="master", sha=sha("c3"))]
    assert advance_idle() == 0  # a job is on the way: the sweep leaves the bisection to it
    bisection = play.until_done()
    assert bisection.state == "found" and bisection.culprit == sha("c5")
    assert advance_idle() == 0  # ended


# --- cancel and page --------------------------------------------------------------------------


def test_cancel_cancels_its_open_jobs(bob, mallory, recipe, agent):
    create(bob)
    good, commits = linear_range(4)
    Play(agent, tps=lambda commit: GOOD_TPS).list_range(good, commits)
    bisection = Bisection.objects.get()
    refused = client_of(mallory).post(f"/api/v1/bisections/{bisection.pk}/cancel/")
    assert refused.status_code == 403
    response = client_of(bob).post(f"/api/v1/bisections/{bisection.pk}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "cancelled"
    assert not bisection.jobs.exclude(state__in=Job.FINAL).exists()
    again = client_of(bob).post(f"/api/v1/bisections/{bisection.pk}/cancel/")
    assert again.status_code == 409


def test_the_page_names_the_culprit(bob, recipe, agent, client):
    create(bob)
    good, commits = linear_range(8)
    play = Play(agent, tps=slow_from(5))
    play.list_range(good, commits)
    bisection = play.until_done()
    client.force_login(bob)
    page = client.get(f"/bisections/{bisection.pk}/").content.decode()
    assert "commit 5" in page and f"<code>master@{sha('c5')[:12]}</code>" in page
    assert "src/file5.c" in page and "alice" in page
    assert "/compare/?" in page
    listing = client.get("/bisections/").content.decode()
    assert f"/bisections/{bisection.pk}/" in listing
    detail = client_of(bob).get(f"/api/v1/bisections/{bisection.pk}/").json()
    assert detail["culprit"] == sha("c5")
    assert [c["step"] for c in detail["commits"]] == sorted(c["step"] for c in detail["commits"])
    assert BisectionCommit.objects.get(sha=sha("c5")).verdict == "bad"


@pytest.mark.parametrize(
    ("recipe_name", "expected"),
    [
        ("master", "master@0123456789ab"),
        ("master+pgxact-split", "master@0123456789ab+pgxact-split"),
        ("15devel", "15devel@0123456789ab"),
        ("9.6.24+x", "9.6devel@0123456789ab+x"),
    ],
)
def test_a_commit_is_named_as_a_version_of_its_recipes_major(recipe_name, expected):
    name = step_version(recipe_name=recipe_name, sha="0123456789abcdef" * 2 + "01234567")
    assert name == expected
    parsed = version_parse(name)
    assert parsed.commit == "0123456789ab" and parsed.needs_build
