"""The verdicts of a comparison through the API: pooling, the baseline mark, the threshold,
"settle it" and A/A, against real PostgreSQL."""

import json
import math

import numpy as np
import pytest
from rest_framework.test import APIClient
from scipy.stats import ttest_ind

from benchhub.compare.tests.uploads import upload
from benchhub.jobs.models import Job
from benchhub.results.models import Run

BASE = "/api/v1/compare/?workload=select-only&host=bench-01"
URL = BASE + "&versions=13.3,15.4"


def _levels(body: dict, index: int = 0) -> dict[int, dict]:
    return {level["clients"]: level for level in body["verdicts"][index]["levels"]}


def test_it_pools_every_run_of_a_build_under_its_comparability_key(anon_client, agent):
    old = upload(agent, version="13.3", tps={1: [100, 104]}, started_at="2026-11-01T10:00:00Z")
    new = upload(agent, version="13.3", tps={1: [102, 101]}, started_at="2026-11-02T10:00:00Z")
    other = upload(agent, version="15.4", tps={1: [110, 113]}, started_at="2026-11-03T10:00:00Z")
    later = upload(agent, version="15.4", tps={1: [111, 112]}, started_at="2026-11-04T10:00:00Z")
    # another configuration of 13.3: another comparability key, not pooled
    upload(
        agent,
        version="13.3",
        tps={1: [50, 51]},
        settings={"shared_buffers": "1GB"},
        started_at="2026-10-01T10:00:00Z",
    )
    body = anon_client.get(URL).json()
    assert body["series"][0]["run"] == str(new.uuid)
    assert body["series"][0]["pooled_runs"] == [str(new.uuid), str(old.uuid)]
    assert body["series"][1]["pooled_runs"] == [str(later.uuid), str(other.uuid)]
    level = _levels(body)[1]
    assert level["repeats"] == [4, 4]
    # Each pooled run is one unit: the mean of the logs of its repeats.
    other_logs = np.log([110, 113]).mean(), np.log([111, 112]).mean()
    base_logs = np.log([102, 101]).mean(), np.log([100, 104]).mean()
    test = ttest_ind(other_logs, base_logs)
    assert level["tps_ratio"] == pytest.approx(math.exp(np.mean(other_logs) - np.mean(base_logs)))
    assert (level["tps_ratio_low"], level["tps_ratio_high"]) == pytest.approx(
        tuple(np.exp(test.confidence_interval(0.95)))
    )
    assert level["interval_unit"] == "run_means"
    assert level["interval_unit_text"] == "run means (2 runs a side)"
    assert "Units: run means (2 runs a side)" in level["description"]


def test_it_says_an_interval_of_one_run_a_side_sees_only_the_repeats_inside_one_job(
    anon_client, agent
):
    upload(agent, version="13.3", tps={1: [100, 104, 102], 2: [200, 203]})
    upload(agent, version="15.4", tps={1: [110, 113, 111], 2: [201]})
    levels = _levels(anon_client.get(URL).json())
    assert levels[1]["repeats"] == [3, 3]
    assert levels[1]["interval_unit"] == "repeats_in_one_job"
    assert levels[1]["interval_unit_text"] == (
        "repeats inside one job (the interval sees only within-job variation)"
    )
    assert "variation between separate jobs is not seen" in levels[1]["description"]


def test_it_takes_the_version_marked_baseline_unless_one_is_named(anon_client, agent):
    upload(agent, version="13.3", tps={1: [100, 101]})
    marked = upload(agent, version="15.4", tps={1: [120, 121]})
    Run.objects.filter(pk=marked.pk).update(baseline=True)
    body = anon_client.get(URL).json()
    assert (body["baseline"], body["baseline_marked"]) == ("15.4", True)
    assert body["verdicts"][0]["label"] == "13.3"
    assert _levels(body)[1]["verdict"] == "slower"
    named = anon_client.get(URL + "&baseline=13.3").json()
    assert (named["baseline"], named["baseline_marked"]) == ("13.3", False)
    assert _levels(named)[1]["verdict"] == "faster"


def test_it_reads_the_practical_threshold_of_each_comparison(anon_client, agent):
    upload(agent, version="13.3", tps={1: [1000, 1001, 999, 1000.5, 999.5]})
    upload(agent, version="15.4", tps={1: [1010, 1011, 1009, 1010.5, 1009.5]})
    at_two = _levels(anon_client.get(URL).json())[1]
    assert at_two["verdict"] == "same"
    # five a side: the rank test is shown, every other value above every baseline value
    assert at_two["cliffs_delta"] == pytest.approx(1.0)
    assert at_two["mann_whitney_p"] == pytest.approx(2 / 252)  # exact: 2 of C(10, 5) orders
    body = anon_client.get(URL + "&threshold=0.5").json()
    assert body["threshold_pct"] == 0.5
    assert _levels(body)[1]["verdict"] == "faster"


@pytest.mark.parametrize(
    ("query", "field"),
    [("&threshold=0", "threshold"), ("&threshold=x", "threshold"), ("&baseline=9.6", "baseline")],
)
def test_it_names_a_bad_threshold_or_baseline(anon_client, agent, query, field):
    upload(agent, version="13.3", tps={1: [100, 101]})
    response = anon_client.get(URL + query)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def _settle(client, query: str = ""):
    return client.post(f"/api/v1/compare/settle/?workload=select-only&host=bench-01{query}")


def _upload_for_job(agent, job: dict, version: str, tps: dict[int, list[float]]) -> Run:
    return upload(agent, version=version, tps=tps, job={"id": job["id"], "attempt": 1})


def test_it_settles_levels_of_several_runs_a_side_with_one_job_of_more_repeats(bob, agent):
    client = APIClient()
    client.force_login(bob)
    upload(agent, version="13.3", tps={1: [100, 103], 2: [200, 201]})
    upload(agent, version="13.3", tps={1: [101, 102], 2: [201, 200]})
    upload(agent, version="15.4", tps={1: [104, 106], 2: [400, 402]})
    upload(agent, version="15.4", tps={1: [118, 120], 2: [401, 403]})
    before = _levels(client.get(URL).json())
    assert (before[1]["verdict"], before[2]["verdict"]) == ("inconclusive", "faster")
    assert before[1]["interval_unit"] == "run_means"

    response = _settle(client, "&versions=13.3,15.4")
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["jobs"] == [job["id"]] and Job.objects.count() == 1
    assert job["versions"] == ["13.3", "15.4"] and job["clients"] == [1]
    assert job["host"] == "bench-01" and job["duration_s"] == 2.0 and job["created_by"] == "bob"
    assert 1 <= job["repeats"] <= 10
    assert "settle it: clients 1" in job["events"][0]["actor"]

    # the agent runs it: more repeats of level 1, one more run a side
    claimed = agent.client.post("/api/v1/jobs/claim/")
    assert claimed.status_code == 200 and claimed.json()["id"] == job["id"]
    _upload_for_job(agent, job, "13.3", {1: [100, 100.5, 99.5, 100.2, 99.8, 100.1]})
    _upload_for_job(agent, job, "15.4", {1: [110, 110.5, 109.5, 110.2, 109.8, 110.1]})
    after = _levels(client.get(URL).json())
    assert after[1]["repeats"] == [10, 10]
    assert after[1]["interval_unit_text"] == "run means (3 runs a side)"
    assert after[2]["repeats"] == [4, 4]  # the level not settled keeps its runs


def test_it_settles_one_run_a_side_with_separate_jobs_whose_runs_become_the_units(bob, agent):
    client = APIClient()
    client.force_login(bob)
    upload(agent, version="13.3", tps={1: [100, 103], 2: [200, 201]})
    upload(agent, version="15.4", tps={1: [104, 115], 2: [400, 402]})
    before = _levels(client.get(URL).json())
    assert (before[1]["verdict"], before[2]["verdict"]) == ("inconclusive", "faster")
    assert before[1]["interval_unit"] == "repeats_in_one_job"

    response = _settle(client, "&versions=13.3,15.4")
    assert response.status_code == 201, response.content
    body = response.json()
    # More repeats in one more job would still leave the variation between jobs unseen: two
    # separate jobs, each measuring like the runs it settles (their two repeats).
    jobs = list(Job.objects.order_by("id"))
    assert body["jobs"] == [job.pk for job in jobs] and len(jobs) == 2
    assert body["id"] == jobs[0].pk
    for job in jobs:
        assert job.versions == ["13.3", "15.4"] and job.clients == [1] and job.repeats == 2
        assert job.host.name == "bench-01" and job.state == Job.State.QUEUED

    # their runs land: three runs a side, and the interval's units are the run means
    for day, (base, other) in enumerate(
        (([100, 100.4], [110, 110.4]), ([100.2, 99.8], [110.2, 109.8])), 2
    ):
        started = f"2026-11-1{day}T10:00:00Z"
        upload(agent, version="13.3", tps={1: base}, started_at=started)
        upload(agent, version="15.4", tps={1: other}, started_at=started)
    after = _levels(client.get(URL).json())
    assert after[1]["repeats"] == [6, 6] and after[1]["verdict"] == "faster"
    assert after[1]["interval_unit"] == "run_means"
    assert after[1]["interval_unit_text"] == "run means (3 runs a side)"

    again = _settle(client, "&versions=13.3,15.4")
    assert again.status_code == 409 and again.json()["error"] == "nothing_to_settle"
    assert Job.objects.count() == 2


def test_it_refuses_to_settle_for_an_anonymous_caller_or_a_bad_selection(client, bob, agent):
    upload(agent, version="13.3", tps={1: [100, 112]})
    upload(agent, version="15.4", tps={1: [104, 115]})
    assert _settle(client, "&versions=13.3,15.4").status_code in (401, 403)
    client.force_login(bob)
    response = _settle(client, "&versions=13.3,15.4&threshold=90")
    assert response.status_code == 400 and "threshold" in response.json()["fields"]
    assert Job.objects.count() == 0


AA_JOB = {
    "versions": ["14.23"],
    "aa": True,
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1, 2],
    "duration_s": 2,
    "repeats": 2,
    "host": "bench-01",
}


def test_it_runs_an_a_a_job_as_two_series_and_compares_them_as_a_a(client, bob, agent):
    client.force_login(bob)
    refused = client.post(
        "/api/v1/jobs/",
        data=json.dumps({**AA_JOB, "versions": ["13", "14"]}),
        content_type="application/json",
    )
    assert refused.status_code == 400 and "versions" in refused.json()["fields"]
    created = client.post("/api/v1/jobs/", data=json.dumps(AA_JOB), content_type="application/json")
    assert created.status_code == 201
    job = created.json()
    assert job["versions"] == ["14.23", "14.23"] and job["aa"] is True
    assert agent.client.post("/api/v1/jobs/claim/").json()["versions"] == ["14.23", "14.23"]
    first = _upload_for_job(agent, job, "14.23", {1: [100, 103], 2: [200, 198]})
    second = _upload_for_job(agent, job, "14.23", {1: [101, 102], 2: [199, 203]})

    page = client.get(f"/jobs/{job['id']}/").content.decode()
    link = f"/compare/?runs={first.uuid},{second.uuid}"
    assert link in page and "A/A comparison of the two series" in page
    body = client.get(f"/api/v1/compare/?runs={first.uuid},{second.uuid}").json()
    assert body["aa"] is True
    assert [len(body["verdicts"][0]["levels"])] == [2]
    html = client.get(link).content.decode()
    assert "A/A comparison: 14.23 against itself" in html
    # settling an A/A comparison queues another A/A job of that version
    settled = client.post(f"/api/v1/compare/settle/?runs={first.uuid},{second.uuid}")
    assert settled.status_code == 201, settled.content
    assert settled.json()["versions"] == ["14.23", "14.23"] and settled.json()["aa"] is True
