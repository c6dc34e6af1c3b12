"""Home and the experiment pages follow the work: the comparisons just measured with their
verdicts come first, and where no result has arrived yet the pages name the job that will
bring it (its stage, progress and expected end)."""

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.experiment_data import e2_idle_upload
from benchhub.compare.tests.uploads import upload

SELECT_ONLY = {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"}
PROGRESS = {"stage": "level c=4 repeat=2 version=15.4", "step": 2, "steps": 8}


@pytest.fixture
def bob_client(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client


def queue(bob_client: APIClient, **job: Any) -> int:
    body = {"versions": ["13.3", "15.4"], "workload": SELECT_ONLY, "clients": [1, 4],
            "duration_s": 2, "repeats": 4, **job}  # fmt: skip
    response = bob_client.post("/api/v1/jobs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def claim_and_beat(agent, job_id: int) -> None:
    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    beat = agent.client.post(
        f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json"
    )
    assert beat.status_code == 200, beat.content


def measure(agent, job_id: int, tps: dict[str, dict[int, list[float]]]) -> None:
    """The agent claims the job, uploads a run of each version and says it is done."""
    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    for version, levels in tps.items():
        upload(agent, version=version, tps=levels, job={"id": job_id, "attempt": 1})
    done = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert done.status_code == 200, done.content


BASE = {1: [1000.0, 1010.0, 990.0, 1005.0], 4: [4000.0, 4010.0, 3990.0, 4005.0]}
FASTER = {1: [1500.0, 1510.0, 1490.0, 1505.0], 4: [6000.0, 6010.0, 5990.0, 6005.0]}


def test_it_shows_the_latest_comparison_with_its_verdict_before_the_runs(client, agent, bob_client):
    job_id = queue(bob_client)
    measure(agent, job_id, {"13.3": BASE, "15.4": FASTER})
    html = client.get("/").content.decode()
    latest = html.split('id="latest-comparisons"')[1].split("</section>")[0]
    assert html.index('id="latest-comparisons"') < html.index('id="runs-title"')
    assert latest.count('<li class="comparison">') == 1
    assert "select-only on bench-01: 13.3 vs 15.4" in latest
    assert '<span class="verdict verdict-faster"' in latest and ">faster</span>" in latest
    assert f'href="/jobs/{job_id}/"' in latest
    link = "/compare/?workload=select-only&amp;host=bench-01&amp;versions=13.3,15.4"
    assert link in latest
    # The line says what the Compare page it links to says.
    compare = client.get(link.replace("&amp;", "&")).content.decode()
    sentence = latest.split('title="')[1].split('"')[0]
    assert sentence.startswith("15.4 against 13.3: faster at 2 of 2 client levels")
    assert sentence in compare


def test_it_shows_one_line_per_comparison_however_often_it_was_measured(client, agent, bob_client):
    for _ in range(2):
        measure(agent, queue(bob_client), {"13.3": BASE, "15.4": BASE})
    latest = client.get("/").content.decode().split('id="latest-comparisons"')[1]
    assert latest.split("</section>")[0].count('<li class="comparison">') == 1


def test_it_says_no_comparison_yet_at_first(client, db):
    html = client.get("/").content.decode()
    assert "No comparison yet" in html


def test_it_names_the_job_that_will_bring_the_first_run(client, agent, bob_client):
    job_id = queue(bob_client)
    queued = client.get("/").content.decode()
    assert "No runs yet: 1 job will bring the first" in queued
    assert f"Job {job_id}</a>: 13.3 vs 15.4, select-only, waiting in the queue since" in queued
    claim_and_beat(agent, job_id)
    html = client.get("/").content.decode()
    pending = html.split('id="runs-pending"')[1].split("</div>")[0]
    assert f'href="/jobs/{job_id}/"' in pending
    assert "running</span> on bench-01, level c=4 repeat=2 version=15.4, step 2 of 8" in pending
    assert "expected to end about" in pending and "UTC" in pending
    assert "Create a runner token" not in html.split('id="runs-title"')[1]
    # The Queue panel that home.js keeps live says the same.
    active = client.get("/api/v1/status/").json()["active"]
    assert active[0]["id"] == job_id and active[0]["expected_end"] is not None


def test_it_names_the_experiments_jobs_on_the_experiment_pages(client, agent, bob_client):
    job_id = queue(bob_client, versions=["14"], workload={"catalog": "e2-idle-connections"})
    other = queue(bob_client)  # not of an experiment: not listed there
    page = client.get("/experiments/e2/").content.decode()
    pending = page.split('id="experiment-pending"')[1].split("</div>")[0]
    assert f"Job {job_id}</a>: 14," in pending and "waiting in the queue" in pending
    assert f"Job {other}<" not in pending
    assert "No runs of this experiment" not in page
    index = client.get("/experiments/").content.decode()
    e2 = index.split('id="experiment-e2"')[1].split("</section>")[0]
    assert f"Job {job_id}</a>" in e2 and "Not run yet, coming" in e2
    e1 = index.split('id="experiment-e1"')[1].split("</section>")[0]
    assert "Not run yet." in e1 and "Job " not in e1
    claim_and_beat(agent, job_id)
    pending = client.get("/experiments/e2/").content.decode().split('id="experiment-pending"')[1]
    assert "running</span> on bench-01" in pending.split("</div>")[0]


def test_it_keeps_finished_jobs_off_the_pending_lists(client, agent, bob_client):
    job_id = queue(bob_client, versions=["14"], workload={"catalog": "e2-idle-connections"})
    agent.client.post("/api/v1/jobs/claim/")
    finish = agent.client.post(
        f"/api/v1/jobs/{job_id}/finish/",
        data=json.dumps({"outcome": "failed", "stage": "provision", "message": "no server"}),
        content_type="application/json",
    )
    assert finish.status_code == 200, finish.content
    assert 'id="experiment-pending"' not in client.get("/experiments/e2/").content.decode()
    assert 'id="runs-pending"' not in client.get("/").content.decode()


def test_it_says_how_the_jobs_an_experiment_page_followed_ended(client, agent, bob_client):
    e2 = {"catalog": "e2-idle-connections"}
    failed = queue(bob_client, versions=["14"], workload=e2)
    other = queue(bob_client)  # not of an experiment
    agent.client.post("/api/v1/jobs/claim/")
    finish = agent.client.post(
        f"/api/v1/jobs/{failed}/finish/",
        data=json.dumps({"outcome": "failed", "stage": "provision", "message": "no server"}),
        content_type="application/json",
    )
    assert finish.status_code == 200, finish.content
    waiting = queue(bob_client, versions=["15"], workload=e2)
    box = client.get(f"/experiments/e2/jobs/?shown={failed},{other},x,-3,9999999999").content
    box = box.decode()
    assert f"Job {waiting}</a>: 15, e2-idle-connections, waiting in the queue" in box
    assert '<span class="state-failed">failed</span> at ' in box and " UTC in provision" in box
    assert f"Job {other}<" not in box
    assert "Nothing to show yet: these jobs will bring the runs" in box
    assert (
        "More of this experiment is coming"
        in client.get(f"/experiments/e2/jobs/?shown={failed}&results=1").content.decode()
    )
    # A page that did not list the failed job is not told about it.
    assert f"Job {failed}<" not in client.get("/experiments/e2/jobs/").content.decode()
    assert client.get("/experiments/e9/jobs/").status_code == 404


def test_it_says_finished_when_every_followed_job_is_done(client, agent, bob_client):
    job_id = queue(bob_client, versions=["14"], workload={"catalog": "e2-idle-connections"})
    claim_and_beat(agent, job_id)
    e2_idle_upload(
        agent, version="14", tps=[9000.0], established=[9000], job={"id": job_id, "attempt": 1}
    )
    done = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert done.status_code == 200, done.content
    box = client.get(f"/experiments/e2/jobs/?shown={job_id}&results=1").content.decode()
    assert f'data-job="{job_id}" data-state="done"' in box
    assert '<span class="state-done">finished</span> at ' in box
    assert "The jobs this page followed have ended; it shows the runs they brought." in box
    assert client.get("/experiments/e2/jobs/").content.decode().strip() == ""


def test_the_experiments_index_says_how_the_jobs_it_listed_ended(client, agent, bob_client):
    job_id = queue(bob_client, versions=["14"], workload={"catalog": "e2-idle-connections"})
    claim_and_beat(agent, job_id)
    e2_idle_upload(
        agent, version="14", tps=[9000.0], established=[9000], job={"id": job_id, "attempt": 1}
    )
    done = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert done.status_code == 200, done.content
    followed = client.get(f"/experiments/?shown={job_id},x").content.decode()
    e2 = followed.split('id="experiment-e2"')[1].split("</section>")[0]
    assert "The jobs this page followed have ended" in e2
    assert f'data-job="{job_id}" data-state="done"' in e2
    assert '<span class="state-done">finished</span> at ' in e2
    assert "<td>14</td>" in e2  # the runs it brought, listed
    e1 = followed.split('id="experiment-e1"')[1].split("</section>")[0]
    assert f"Job {job_id}<" not in e1
    # A first visit lists no ended job.
    assert f"Job {job_id}<" not in client.get("/experiments/").content.decode()


COMPARE_QUERY = "workload=select-only&host=bench-01&versions=13.3,15.4"


def test_the_compare_pending_box_follows_the_job_until_its_runs_arrive(client, agent, bob_client):
    upload(agent, version="13.3", tps=BASE)
    job_id = queue(bob_client)
    box = client.get(f"/compare/pending/?{COMPARE_QUERY}").content.decode()
    assert "Not measured yet: 15.4. This page fills in when the runs arrive." in box
    assert f'data-job="{job_id}" data-state="queued"' in box and "data-arrived" not in box
    claim_and_beat(agent, job_id)
    box = client.get(f"/compare/pending/?{COMPARE_QUERY}&shown={job_id}").content.decode()
    assert "running</span> on bench-01, level c=4 repeat=2 version=15.4, step 2 of 8" in box
    for version, tps in (("13.3", BASE), ("15.4", FASTER)):
        upload(agent, version=version, tps=tps, job={"id": job_id, "attempt": 1})
    done = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert done.status_code == 200, done.content
    box = client.get(f"/compare/pending/?{COMPARE_QUERY}&shown={job_id}").content.decode()
    assert 'data-arrived="1"' in box and "The runs have arrived" in box
    assert '<span class="state-done">finished</span> at ' in box
    page = client.get(f"/compare/?{COMPARE_QUERY}").content.decode()
    assert 'id="pending-jobs"' not in page and 'id="verdicts"' in page


def test_the_compare_pending_box_refuses_a_query_it_cannot_read(client, db):
    assert client.get("/compare/pending/?workload=select-only&versions=13").status_code == 400
