"""Home in a real browser follows a job: while it runs, the page names it with its stage and
expected end; when it finishes, the comparison it measured appears first, with its verdict,
and its runs below, without the page reloading."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import upload
from benchhub.dashboard.tests.test_home_pages import BASE, FASTER, PROGRESS, queue

WAIT_MS = 10_000
MARK = "window.__benchhubMarker = 'loaded once'"
SAME_DOCUMENT = "[window.__benchhubMarker, performance.getEntriesByType('navigation').length]"


@pytest.mark.django_db(transaction=True)
def test_it_shows_the_verdict_of_a_job_when_it_finishes(live_server, page, bob, agent):
    bob_client = APIClient()
    bob_client.force_login(bob)
    job_id = queue(bob_client)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/")
    expect(page.locator("#runs-pending")).to_contain_text(f"Job {job_id}")
    expect(page.locator("#latest-comparisons")).to_contain_text("No comparison yet")
    page.evaluate(MARK)

    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    agent.client.post(f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json")
    row = page.locator(f'#active-jobs tr[data-job="{job_id}"]')
    expect(row.locator(".stage")).to_have_text(PROGRESS["stage"], timeout=WAIT_MS)
    expect(row.locator(".expected-end")).to_contain_text("expected to end about", timeout=WAIT_MS)

    for version, tps in (("13.3", BASE), ("15.4", FASTER)):
        upload(agent, version=version, tps=tps, job={"id": job_id, "attempt": 1})
    finish = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert finish.status_code == 200, finish.content

    line = page.locator("#latest-comparisons li.comparison")
    expect(line).to_have_count(1, timeout=WAIT_MS)
    expect(line).to_contain_text("select-only on bench-01: 13.3 vs 15.4")
    expect(line.locator(".verdict-faster")).to_have_text("faster")
    expect(page.locator("#runs-pending")).to_have_count(0)
    expect(page.locator("#home-runs table.runs tbody tr")).to_have_count(2)
    assert page.evaluate(SAME_DOCUMENT) == ["loaded once", 1]
    assert errors == []
