"""Static files as pages get them: the plotly.js built for the pages (frontend/plotly), served
by a hashed name, compressed and cached for good; its styles from a file under the CSP; the
favicon."""

import hashlib
import json
import re
from pathlib import Path

import plotly.offline
import pytest
from django.conf import settings

from benchhub.compare.tests.uploads import upload_evidence
from benchhub.dashboard.tests.test_browser_security import _violations, _watch

PLOTLY = settings.BASE_DIR / "frontend" / "plotly"
VENDORED = settings.BASE_DIR / "frontend" / "static" / "vendor" / "plotly"
COMPARE = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
TEN_YEARS = "max-age=315360000"


def _two_runs_with_evidence(agent) -> None:
    """Two versions whose Compare page draws scatter, bar and icicle (flame graph) figures."""
    for version, fast, folded in [
        ("13.3", 100, "postgres;a 80\npostgres;b 20\n"),
        ("15.4", 150, "postgres;a 95\npostgres;b 5\n"),
    ]:
        upload_evidence(
            agent,
            version=version,
            tps={1: [100, 101, 99], 16: [fast, fast + 1, fast - 1]},
            waits={"CPU": 0.5, "LWLock:ProcArray": 0.5},
            folded=folded,
            p99=3.0,
        )


@pytest.mark.django_db(transaction=True)
def test_it_draws_every_chart_with_the_small_bundle_served_hashed_compressed_and_cached(
    live_server, page, agent
):
    _two_runs_with_evidence(agent)
    console = _watch(page)
    served = []
    page.on("response", lambda response: served.append(response))

    page.goto(live_server.url + COMPARE + "#flames")
    page.wait_for_selector("#tps-chart .main-svg")
    page.wait_for_selector("#why-flame-diff g.slice")
    page.click("#why summary")  # the wait events' bars
    page.wait_for_selector("#why-waits .main-svg")
    page.hover("#tps-chart .main-svg")

    scripts = [r for r in served if "/vendor/plotly/" in r.url and r.url.endswith(".js")]
    assert len(scripts) == 1
    script = scripts[0]
    assert re.search(r"/static/vendor/plotly/plotly\.min\.[0-9a-f]{12}\.js$", script.url)
    headers = script.all_headers()
    assert TEN_YEARS in headers["cache-control"] and "immutable" in headers["cache-control"]
    assert headers["content-encoding"] == "gzip"
    assert int(headers["content-length"]) < 600_000  # the full plotly.min.js: 1.4 MB gzipped
    assert script.body() == (VENDORED / "plotly.min.js").read_bytes()
    # plotly's rules came from plotly.css: the modebar sits in the chart's corner, over no title
    modebar = page.evaluate(
        "getComputedStyle(document.querySelector('#tps-chart .modebar')).position"
    )
    assert modebar == "absolute"
    assert page.locator("style#plotly\\.js-style-global").count() == 0
    assert _violations(page) == []
    assert console == []


def test_it_vendors_the_plotly_js_the_plotly_package_bundles():
    package = json.loads((PLOTLY / "package.json").read_text())
    assert package["devDependencies"]["plotly.js"] == plotly.offline.get_plotlyjs_version()
    bundle = (VENDORED / "plotly.min.js").read_text()
    assert bundle.startswith(f"/*! plotly.js v{plotly.offline.get_plotlyjs_version()} ")
    for line in (PLOTLY / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((VENDORED / name).read_bytes()).hexdigest() == digest, name


def test_it_answers_the_favicon_and_links_it(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content)
    assert body == Path(settings.BASE_DIR / "frontend" / "root" / "favicon.ico").read_bytes()
    assert '<link rel="icon" href="/favicon.ico">' in client.get("/").content.decode()
