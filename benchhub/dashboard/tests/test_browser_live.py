"""The live pages in a real browser: a job's page and the home page follow what an agent reports
through the API, without the page reloading."""

import json
from typing import Any

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from benchhub.testing.browser import screenshot
from benchhub.testing.payloads import run_payload

JOB: dict[str, Any] = {
    "versions": ["13", "14"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1, 2],
    "duration_s": 2,
    "repeats": 1,
}
PROGRESS = {
    "stage": "level c=2 repeat=1 version=14",
    "version": "14",
    "clients": 2,
    "repeat": 1,
    "step": 3,
    "steps": 8,
    "line": "progress: 2.0 s, 812.3 tps, lat 1.2 ms stddev 0.3",
}
MARK = "window.__benchhubMarker = 'loaded once'"
SAME_DOCUMENT = "[window.__benchhubMarker, performance.getEntriesByType('navigation').length]"
WAIT_MS = 10_000


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def queue_job(client) -> int:
    response = client.post("/api/v1/jobs/", JOB, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def assert_not_reloaded(page) -> None:
    assert page.evaluate(SAME_DOCUMENT) == ["loaded once", 1]


@pytest.mark.django_db(transaction=True)
def test_it_follows_the_agent_on_a_job_page_until_the_job_is_done(
    live_server, page, bob_client, agent
):
    job_id = queue_job(bob_client)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/jobs/{job_id}/")
    expect(page.locator("#job-state")).to_have_text("queued")
    expect(page.locator("#job-stage")).to_have_text("waiting in the queue")
    page.evaluate(MARK)

    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    expect(page.locator("#job-state")).to_have_text("claimed", timeout=WAIT_MS)
    expect(page.locator("#job-attempt")).to_have_text("1 of 3")

    beat = agent.client.post(
        f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json"
    )
    assert beat.status_code == 200
    expect(page.locator("#job-state")).to_have_text("running", timeout=WAIT_MS)
    expect(page.locator("#job-stage")).to_have_text(PROGRESS["stage"])
    expect(page.locator("#job-line")).to_have_text(PROGRESS["line"])
    expect(page.locator("#job-step")).to_have_text("step 3 of 8")
    assert page.eval_on_selector("#job-bar", "bar => [bar.value, bar.max]") == [3, 8]
    expect(page.locator("#job-events tr")).to_have_count(3)  # queued, claimed, running
    assert_not_reloaded(page)
    screenshot(page, "job-live-running")

    uuids = []
    for version in JOB["versions"]:
        payload = run_payload(version=version, job={"id": job_id, "attempt": 1})
        upload = agent.client.post(
            "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
        )
        assert upload.status_code == 201, upload.content
        uuids.append(payload["run_uuid"])
    finish = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert finish.status_code == 200, finish.content

    expect(page.locator("#job-state")).to_have_text("done", timeout=WAIT_MS)
    # the stage of the last heartbeat is over: the page says the job ended
    expect(page.locator("#job-stage")).to_have_text("finished")
    expect(page.locator("#job-runs a")).to_have_count(2)
    hrefs = page.eval_on_selector_all("#job-runs a", "links => links.map(a => a.pathname)")
    assert sorted(hrefs) == sorted(f"/runs/{uuid}/" for uuid in uuids)
    expect(page.locator("#job-live")).to_be_hidden()
    expect(page.locator("#job-cancel")).to_have_count(0)  # bob is not signed in in the browser
    assert page.locator("#job-finished_at").inner_text().startswith("20")
    assert_not_reloaded(page)
    screenshot(page, "job-live-done")

    # A final job is not polled any more.
    polls = []
    page.on("request", lambda request: polls.append(request.url))
    page.wait_for_timeout(4500)
    assert [url for url in polls if "/api/v1/jobs/" in url] == []
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_shows_a_cancel_made_elsewhere_on_a_job_page(live_server, page, bob_client, agent):
    job_id = queue_job(bob_client)
    page.goto(f"{live_server.url}/jobs/{job_id}/")
    page.evaluate(MARK)
    agent.client.post("/api/v1/jobs/claim/")
    expect(page.locator("#job-state")).to_have_text("claimed", timeout=WAIT_MS)

    assert bob_client.post(f"/api/v1/jobs/{job_id}/cancel/").status_code == 200

    expect(page.locator("#job-state")).to_have_text("cancelled", timeout=WAIT_MS)
    expect(page.locator("#job-events tr").last).to_contain_text("cancelled")
    expect(page.locator("#job-live")).to_be_hidden()
    assert_not_reloaded(page)


@pytest.mark.django_db(transaction=True)
def test_it_follows_the_queue_and_the_agents_on_the_home_page(live_server, page, bob_client, agent):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/")
    queued = page.locator("#queue .count[data-state=queued] .n")
    running = page.locator("#queue .count[data-state=running] .n")
    expect(queued).to_have_text("0")
    expect(page.locator("#active-empty")).to_be_visible()
    page.evaluate(MARK)

    first, _ = queue_job(bob_client), queue_job(bob_client)
    expect(queued).to_have_text("2", timeout=WAIT_MS)

    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == first
    agent.client.post(f"/api/v1/jobs/{first}/heartbeat/", {"progress": PROGRESS}, format="json")
    expect(running).to_have_text("1", timeout=WAIT_MS)
    expect(queued).to_have_text("1")
    row = page.locator(f"#active-jobs tr[data-job='{first}']")
    expect(row).to_contain_text(PROGRESS["stage"])
    expect(row).to_contain_text(PROGRESS["line"])
    expect(row).to_contain_text("bench-01")
    expect(row.locator("a")).to_have_attribute("href", f"/jobs/{first}/")
    expect(page.locator("#active-empty")).to_be_hidden()
    host = page.locator("#hosts tr[data-host='bench-01']")
    expect(host.locator(".presence")).to_have_text("online")
    expect(host).to_contain_text(" s ago")
    assert_not_reloaded(page)
    screenshot(page, "home-live-running")

    bob_client.post(f"/api/v1/jobs/{first}/cancel/")
    expect(page.locator("#queue .count[data-state=cancelled] .n")).to_have_text(
        "1", timeout=WAIT_MS
    )
    expect(running).to_have_text("0")
    expect(page.locator("#active-empty")).to_be_visible()
    assert_not_reloaded(page)
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_goes_to_the_permalink_from_quick_compare(live_server, page, agent):
    for version in ("13.3", "14.0", "15.1"):
        payload = run_payload(version=version)
        agent.client.post(
            "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
        )
    page.goto(f"{live_server.url}/")
    page.check("#quick-compare input[value='13.3']")
    page.click("#quick-compare button")
    expect(page.locator("#qc-problem")).to_have_text("Pick two or more versions.")
    page.check("#quick-compare input[value='15.1']")
    with page.expect_request(lambda request: "/compare/" in request.url) as request:
        page.click("#quick-compare button")
    assert request.value.url == (
        f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,15.1"
    )


@pytest.mark.django_db(transaction=True)
def test_a_comparison_follows_the_job_measuring_its_missing_version(
    live_server, page, bob_client, agent
):
    payload = run_payload(version="13", host=agent.host_name)
    upload = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert upload.status_code == 201, upload.content
    job_id = queue_job(bob_client)
    url = f"{live_server.url}/compare/?workload=select-only&host={agent.host_name}&versions=13,14"
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    page.goto(url)
    pending = page.locator("#pending-jobs")
    expect(pending).to_contain_text("Not measured yet: 14")
    expect(pending).to_contain_text(f"Job {job_id}: 13 vs 14, select-only, waiting in the queue")
    assert page.locator("#pending-jobs a").get_attribute("href") == f"/jobs/{job_id}/"
    assert "no aggregated run found" not in page.inner_text("main").lower()
    page.evaluate(MARK)

    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    beat = agent.client.post(
        f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json"
    )
    assert beat.status_code == 200
    expect(pending).to_contain_text(
        f"running on {agent.host_name}, {PROGRESS['stage']}", timeout=WAIT_MS
    )
    expect(pending).to_contain_text("step 3 of 8, expected to end about")
    assert_not_reloaded(page)
    screenshot(page, "compare-pending-live")

    # The job's runs arrive and it ends: the page shows the comparison in place of the box.
    for version in ("13", "14"):
        arrived = run_payload(
            version=version, host=agent.host_name, job={"id": job_id, "attempt": 1}
        )
        upload = agent.client.post(
            "/api/v1/runs/", data=json.dumps(arrived), content_type="application/json"
        )
        assert upload.status_code == 201, upload.content
    finish = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert finish.status_code == 200, finish.content
    expect(page.locator("#verdicts")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#pending-jobs")).to_have_count(0)
    expect(page.locator("#baseline-line")).to_contain_text("14")
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_a_comparison_says_how_the_job_it_waited_for_ended(live_server, page, bob_client, agent):
    job_id = queue_job(bob_client)
    url = f"{live_server.url}/compare/?workload=select-only&host={agent.host_name}&versions=13,14"
    page.goto(url)
    line = page.locator(f'#pending-jobs li[data-job="{job_id}"]')
    expect(line).to_contain_text("waiting in the queue")
    page.evaluate(MARK)

    agent.client.post("/api/v1/jobs/claim/")
    finish = agent.client.post(
        f"/api/v1/jobs/{job_id}/finish/",
        data=json.dumps({"outcome": "failed", "stage": "provision", "message": "no server"}),
        content_type="application/json",
    )
    assert finish.status_code == 200, finish.content
    expect(line.locator(".state-failed")).to_have_text("failed", timeout=WAIT_MS)
    expect(line).to_contain_text("UTC in provision")
    expect(page.locator("#pending-jobs")).to_contain_text(
        "The jobs this page followed have ended without bringing their runs"
    )
    assert_not_reloaded(page)
