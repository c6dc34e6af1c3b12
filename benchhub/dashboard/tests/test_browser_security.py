"""Security headers in Chromium: the charts, the admin and the API docs work under the
Content-Security-Policy with no violation."""

import pytest
from playwright.sync_api import ConsoleMessage

from benchhub.compare.tests.uploads import upload
from benchhub.dashboard.tests.test_run_pages import telemetry
from benchhub.testing.browser import sign_in

CLIENTS = {1: [1000.0, 1040.0], 2: [1900.0, 1980.0], 4: [3600.0, 3700.0]}

# Collects every CSP violation the page reports, from before its first script runs.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", e => window.__violations.push(
    e.violatedDirective + " " + e.blockedURI + " " + (e.sourceFile || "") + ":" + e.lineNumber));
"""


def _watch(page) -> list[str]:
    console: list[str] = []

    def message(m: ConsoleMessage) -> None:
        if m.type == "error":
            console.append(m.text)

    page.add_init_script(WATCH)
    page.on("console", message)
    page.on("pageerror", lambda exc: console.append(str(exc)))
    return console


def _violations(page) -> list[str]:
    return page.evaluate("window.__violations")


@pytest.mark.django_db(transaction=True)
def test_it_runs_charts_admin_and_api_docs_under_the_csp(live_server, page, agent, alice):
    scaled = {c: [v * 1.1 for v in values] for c, values in CLIENTS.items()}
    run = upload(agent, version="13.3", tps=CLIENTS)
    upload(agent, version="15.4", tps=scaled)
    from benchhub.results.models import Result, ResultTelemetry

    ResultTelemetry.objects.bulk_create(
        ResultTelemetry(result=result, created_at=run.created_at, samples=telemetry())
        for result in Result.objects.filter(run=run)
    )
    console = _watch(page)
    checks = [
        ("/compare/?workload=select-only&host=bench-01&versions=13.3,15.4", "#tps-chart .main-svg"),
        ("/history/?host=bench-01&workload=select-only&clients=4", "#history-chart .main-svg"),
        (f"/runs/{run.uuid}/", ".js-plotly-plot .main-svg"),
        ("/api/docs/", ".swagger-ui .info"),
        ("/", "main"),
    ]
    for path, ready in checks:
        response = page.goto(live_server.url + path)
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_selector(ready, timeout=15000)
        # hover and the modebar exercise plotly's injected styles
        if "chart" in ready or "plotly" in ready:
            page.hover(ready)
        assert _violations(page) == [], path
    # plotly's PNG download renders into a data: image, which img-src allows.
    page.goto(live_server.url + checks[0][0])
    page.wait_for_selector("#tps-chart .main-svg")
    with page.expect_download() as download:
        page.click("#tps-chart .modebar-btn[data-title='Download plot as a PNG']")
    assert download.value.suggested_filename.endswith(".png")
    assert _violations(page) == []
    sign_in(page, live_server.url, "alice", "alice-pass-1")
    for path in ["/admin/", "/admin/hosts/runnertoken/", "/admin/jobs/job/add/"]:
        page.goto(live_server.url + path)
        page.wait_for_selector("#content")
        assert _violations(page) == [], path
    assert [m for m in console if "Content Security Policy" in m] == []


def test_it_sends_the_security_headers_on_every_response(client, db):
    for path in ["/", "/healthz", "/api/v1/runs/", "/accounts/login/", "/static/js/run.js"]:
        response = client.get(path)
        csp = response["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp, path
        assert "'unsafe-eval'" not in csp and "script-src 'self';" in csp
        assert "style-src 'self';" in csp and "'unsafe-inline'" not in csp
        assert "camera=()" in response["Permissions-Policy"]
        assert response["Cross-Origin-Opener-Policy"] == "same-origin"
        if not path.startswith("/static/"):  # whitenoise answers before; CSP covers framing
            assert response["X-Frame-Options"] == "DENY"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Referrer-Policy"] == "same-origin"
