"""Every page renders in a real browser without errors and without overlapping at 1280x800."""

import json

import pytest

from benchhub.testing.browser import screenshot
from benchhub.testing.payloads import run_payload


@pytest.mark.django_db(transaction=True)
def test_it_renders_the_home_page_in_chromium(live_server, page, agent):
    payload = run_payload(version="14.0")
    agent.client.post("/api/v1/runs/", data=json.dumps(payload), content_type="application/json")
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/")
    assert page.locator("table.runs tbody tr").count() == 1
    assert "14.0" in page.inner_text("table.runs")
    page.goto(f"{live_server.url}/runs/{payload['run_uuid']}/")
    assert "bench-01" in page.inner_text("h1")
    screenshot(page, "run-detail")
    assert errors == []
