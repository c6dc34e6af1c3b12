"""An experiment page in a real browser follows the experiment's job: queued, then running with
its stage, progress and expected end, then finished with the runs it brought drawn, all without
the page reloading."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from benchhub.compare.tests.experiment_data import e2_idle_upload
from benchhub.dashboard.tests.test_home_browser import MARK, SAME_DOCUMENT
from benchhub.dashboard.tests.test_home_pages import PROGRESS, queue
from benchhub.testing.browser import screenshot

WAIT_MS = 15_000


def console_errors(page) -> list[str]:
    """The page's script errors and console errors, as they come."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def claim_and_beat(agent, job_id: int) -> None:
    """The agent claims the job and reports PROGRESS once."""
    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == job_id
    beat = agent.client.post(
        f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json"
    )
    assert beat.status_code == 200, beat.content


def deliver_both_and_finish(agent, job_id: int) -> None:
    """The job's E2 runs of 13.3 and 14beta1 (the latter 1.5 times faster) uploaded, the job
    finished done."""
    for version, gain in (("13.3", 1.0), ("14beta1", 1.5)):
        e2_idle_upload(
            agent,
            version=version,
            tps=[9000 * gain, 9400 * gain],
            established=[9000, 9000],
            job={"id": job_id, "attempt": 1},
        )
    finish = agent.client.post(f"/api/v1/jobs/{job_id}/finish/", {"outcome": "done"}, format="json")
    assert finish.status_code == 200, finish.content


@pytest.mark.django_db(transaction=True)
def test_it_follows_the_experiments_job_until_its_runs_are_drawn(live_server, page, bob, agent):
    bob_client = APIClient()
    bob_client.force_login(bob)
    job_id = queue(
        bob_client, versions=["13.3", "14beta1"], workload={"catalog": "e2-idle-connections"}
    )
    errors = console_errors(page)
    page.goto(f"{live_server.url}/experiments/e2/")
    line = page.locator(f'#experiment-pending li[data-job="{job_id}"]')
    expect(line).to_contain_text("waiting in the queue")
    expect(page.locator("#experiment-pending")).to_contain_text("Nothing to show yet")
    page.evaluate(MARK)

    claim_and_beat(agent, job_id)
    expect(line).to_contain_text(f"running on bench-01, {PROGRESS['stage']}", timeout=WAIT_MS)
    expect(line).to_contain_text("step 2 of 8")
    expect(line).to_contain_text("expected to end about")

    deliver_both_and_finish(agent, job_id)

    expect(line).to_contain_text("finished at", timeout=WAIT_MS)
    expect(line.locator(".state-done")).to_have_text("finished")
    expect(page.locator("#connections-table")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator(".presentation-plot .main-svg").first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#experiment-pending")).to_contain_text(
        "The jobs this page followed have ended; it shows the runs they brought", timeout=WAIT_MS
    )
    assert page.evaluate(SAME_DOCUMENT) == ["loaded once", 1]
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_the_index_follows_an_experiments_job_until_it_finishes(live_server, page, bob, agent):
    bob_client = APIClient()
    bob_client.force_login(bob)
    job_id = queue(
        bob_client, versions=["13.3", "14beta1"], workload={"catalog": "e2-idle-connections"}
    )
    errors = console_errors(page)
    page.goto(f"{live_server.url}/experiments/")
    section = page.locator("#experiment-e2")
    line = section.locator(f'li[data-job="{job_id}"]')
    expect(line).to_contain_text("waiting in the queue")
    expect(section).to_contain_text("Not run yet, coming")
    page.evaluate(MARK)

    claim_and_beat(agent, job_id)
    expect(line).to_contain_text(f"running on bench-01, {PROGRESS['stage']}", timeout=WAIT_MS)
    expect(line).to_contain_text("step 2 of 8")

    deliver_both_and_finish(agent, job_id)

    expect(line.locator(".state-done")).to_have_text("finished", timeout=WAIT_MS)
    expect(section).to_contain_text("The jobs this page followed have ended")
    expect(section.locator("table.ran")).to_contain_text("13.3, 14beta1")
    expect(page.locator("#experiment-e1 li[data-job]")).to_have_count(0)
    screenshot(page, "experiments-live")
    assert page.evaluate(SAME_DOCUMENT) == ["loaded once", 1]
    assert errors == []
