"""Paired verdicts through the API and the page: the repeats a job measured side by side (its
versions in turn at each level and repeat) are compared pair by pair; anything else is not."""

import json

import pytest

from benchhub.compare.tests.uploads import upload

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4&threshold=2"
PAGE = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4&threshold=2"
# The host's speed at each repeat moves both versions alike; 15.4 is 5% faster at each.
BASE = {1: [1000.0, 1180.0, 860.0, 1070.0, 930.0]}
OTHER = {1: [1052.0, 1237.0, 905.0, 1122.0, 979.0]}
JOB = {
    "versions": ["13.3", "15.4"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1],
    "duration_s": 2,
    "repeats": 5,
    "host": "bench-01",
}


def _job(client, agent, **fields) -> dict:
    created = client.post(
        "/api/v1/jobs/", data=json.dumps({**JOB, **fields}), content_type="application/json"
    )
    assert created.status_code == 201, created.content
    assert agent.client.post("/api/v1/jobs/claim/").status_code == 200
    return created.json()


def _level(client) -> dict:
    body = client.get(URL).json()
    return body["verdicts"][0]["levels"][0]


@pytest.fixture
def bobs(client, bob):
    client.force_login(bob)
    return client


def test_it_compares_the_repeats_of_an_interleaved_job_pair_by_pair(bobs, agent):
    job = _job(bobs, agent)
    for version, tps in (("13.3", BASE), ("15.4", OTHER)):
        upload(agent, version=version, tps=tps, job={"id": job["id"], "attempt": 1})

    level = _level(bobs)
    assert level["verdict"] == "faster"
    assert level["interval_method"] == "paired"
    assert level["interval_unit"] == "pairs_in_one_job"
    assert 1.04 < level["tps_ratio_low"] < level["tps_ratio"] < level["tps_ratio_high"] < 1.06
    assert "Paired" in level["description"]
    html = bobs.get(PAGE).content.decode()
    row = html.split('id="verdict-table"', 1)[1].split("</tr>", 2)[1]
    assert 'class="muted interval-method"' in row and ">paired</span>" in row


def test_it_leaves_runs_of_no_job_unpaired_and_undecided_by_the_same_numbers(bobs, agent):
    upload(agent, version="13.3", tps=BASE)
    upload(agent, version="15.4", tps=OTHER)

    level = _level(bobs)
    assert level["verdict"] == "inconclusive"
    assert level["interval_method"] == "unpaired"
    assert level["interval_unit"] == "repeats_in_one_job"
    assert level["tps_ratio_high"] > 1.1
    assert ">unpaired</span>" in bobs.get(PAGE).content.decode()


def test_it_leaves_a_job_that_ran_its_versions_one_after_the_other_unpaired(bobs, agent):
    job = _job(bobs, agent, order="sequential")
    for version, tps in (("13.3", BASE), ("15.4", OTHER)):
        upload(agent, version=version, tps=tps, job={"id": job["id"], "attempt": 1})

    level = _level(bobs)
    assert level["interval_method"] == "unpaired" and level["verdict"] == "inconclusive"


def test_it_says_what_would_settle_a_paired_level_in_pairs(bobs, agent):
    job = _job(bobs, agent, repeats=3)
    noisy = {1: [1000.0, 1180.0, 860.0]}
    other = {1: [1030.0, 1180.0, 895.0]}
    for version, tps in (("13.3", noisy), ("15.4", other)):
        upload(agent, version=version, tps=tps, job={"id": job["id"], "attempt": 1})

    level = _level(bobs)
    assert level["interval_method"] == "paired" and level["verdict"] == "inconclusive"
    assert level["repeats_needed"] is not None and level["repeats_needed"] > 3
    needed = level["repeats_needed"]
    wanted = f"inside one job, {needed} repeats a side ({needed - 3} more), compared pair by pair"
    assert wanted in level["settle_text"]
