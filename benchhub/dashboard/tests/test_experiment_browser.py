"""The Experiments pages in Chromium, against a live server with uploaded runs."""

import pytest
from playwright.sync_api import expect

from benchhub.compare.tests.experiment_data import e2_idle_upload, e2_sweep_upload, e5_upload
from benchhub.results.models import LevelAggregate
from benchhub.testing.browser import screenshot

E5_LEVELS = {52: 52_000.0, 104: 98_000.0, 208: 120_000.0, 512: 110_000.0}


@pytest.mark.django_db(transaction=True)
def test_it_renders_the_tables_and_charts_of_the_e5_and_e2_pages(live_server, page, agent):
    for entry, factor in (("e5-read-only", 1.0), ("e5-tpcb-like", 0.05)):
        for version, gain in (("13.3", 1.0), ("14beta1", 1.15)):
            tps = {c: [v * factor * gain, v * factor * gain * 1.02] for c, v in E5_LEVELS.items()}
            e5_upload(agent, entry=entry, version=version, tps=tps)
    for version, gain in (("13.3", 1.0), ("14beta1", 2.4)):
        e2_idle_upload(
            agent, version=version, tps=[9000 * gain, 9400 * gain], established=[9000, 9000]
        )
        e2_sweep_upload(
            agent,
            version=version,
            tps={64: 70000 * gain, 128: 80000 * gain, 256: 75000 * gain, 1000: 40000 * gain},
        )
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_server.url}/experiments/")
    page.click("#experiment-e5 a:text('show')")
    page.wait_for_selector("#improvement-table")
    assert page.url.endswith("/experiments/e5/?host=bench-01&versions=13.3,14beta1")
    rows = page.locator("#improvement-table tbody tr")
    assert rows.count() == 2 * len(E5_LEVELS)
    first = rows.nth(0).inner_text().split("\t")
    stored = LevelAggregate.objects.get(
        run__workload__name="e5-read-only", run__build__version="14beta1", clients=52
    )
    assert first[:3] == ["read-only", "52", "52"]
    assert first[4] == f"{stored.tps_median:,.1f}"
    assert first[5] == "15.0%"
    assert rows.nth(2).inner_text().split("\t")[2] == "104"  # 208 clients on 104 threads
    screenshot(page, "experiment-e5")

    page.goto(f"{live_server.url}/experiments/e2/?host=bench-01&versions=13.3,14beta1")
    # js/charts.js draws one chart a task: wait for the second.
    expect(page.locator(".presentation-plot .main-svg").nth(1)).to_be_attached()
    names = page.evaluate(
        "Array.from(document.querySelector('.presentation-plot').data, t => t.name)"
    )
    assert names == ["13.3 (repeat 1)", "14beta1 (repeat 1)"]
    table = page.inner_text("#connections-table")
    assert "9128" in table and "1000" in table
    assert "65536 / 1048576" in page.inner_text("#client-limits")
    # each figure holds its chart and caption (the run page's fixed-height .chart must not apply)
    heights = page.evaluate(
        "Array.from(document.querySelectorAll('figure.chart'),"
        " f => [f.getBoundingClientRect().height, f.querySelector('.plot').offsetHeight])"
    )
    assert all(figure > plot for figure, plot in heights)
    screenshot(page, "experiment-e2")
    assert errors == []
