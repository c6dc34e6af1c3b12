"""In a real browser: a hostile comment shows as text and never runs; the run, diff and review
pages render at 1280x800."""

import json

import pytest
from playwright.sync_api import expect

from benchhub.testing.browser import SCREENSHOTS, screenshot
from benchhub.testing.payloads import run_payload

PAYLOAD = '<script>window.__xss = 1</script> and <img src=x onerror="window.__xss = 2"> **bold**'


def _upload(agent, **overrides) -> str:
    payload = run_payload(**overrides)
    for result in payload["results"]:
        result["telemetry"] = [
            {"t": float(t), "cpu_user_pct": 30.0 + t, "cpu_system_pct": 8.0, "disk_util_pct": 5.0}
            for t in range(1, 3)
        ]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload["run_uuid"]


def _sign_in(page, base: str, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "bob-pass-1")
    page.click("input[type=submit]")


@pytest.mark.django_db(transaction=True)
def test_it_shows_a_hostile_comment_as_text_and_never_runs_it(live_server, page, agent, bob):
    run_uuid = _upload(agent, version="15.4")
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    run_url = f"/runs/{run_uuid}/"
    _sign_in(page, live_server.url, run_url)
    assert page.url.endswith(run_url)
    page.fill("textarea[name=body]", PAYLOAD)
    page.click("form.comment-form button[type=submit]")
    page.wait_for_selector("article.comment")
    body = page.locator("article.comment .comment-body")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert "<script>window.__xss = 1</script>" in body.inner_text()
    assert '<img src=x onerror="window.__xss = 2">' in body.inner_text()
    assert body.locator("strong").inner_text() == "bold"
    assert body.locator("script, img").count() == 0
    # Reloaded, the stored comment is just as inert.
    page.reload()
    assert page.evaluate("typeof window.__xss") == "undefined"
    page.locator("#comments").scroll_into_view_if_needed()
    screenshot(page, "review-hostile-comment")
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_renders_the_run_diff_and_review_pages_in_chromium(live_server, page, agent, bob):
    a = _upload(agent, version="15.4")
    b = _upload(
        agent,
        version="16.1",
        configuration={
            "settings": {"shared_buffers": "1GB", "max_connections": "200", "jit": "off"},
            "sources": {"shared_buffers": "configuration file", "jit": "command line"},
            "overrides": {},
        },
    )
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _sign_in(page, live_server.url, f"/runs/{a}/")
    page.fill("input[name=name]", "noisy")
    page.click("text=Add tag")
    page.click("text=Mark as baseline")
    page.wait_for_selector(".badge.baseline")
    # two charts per level, drawn by run.js with the vendored plotly.js, one a task (charts.js)
    page.wait_for_selector("#chart-telemetry-2 .main-svg")
    expect(page.locator(".chart .main-svg").nth(3)).to_be_attached()
    screenshot(page, "run-detail-full")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOTS / "run-detail-first-screen.png"))
    page.fill("#diff-b", b)
    page.click("form.diff-with button")
    page.wait_for_selector("tr.differs")
    assert "shared_buffers" in page.inner_text("#diff-settings")
    screenshot(page, "diff")
    page.goto(f"{live_server.url}/review/")
    assert "marked baseline" in page.inner_text("table.runs")
    screenshot(page, "review-log")
    assert errors == []
