"""The Compare and History pages in Chromium, against a live server with uploaded runs."""

import csv
import io
import urllib.request

import pytest

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import LevelAggregate
from benchhub.testing.browser import screenshot

CLIENTS = {1: [1000, 1040], 2: [1900, 1980], 4: [3600, 3700], 8: [5200, 5350]}


def _scaled(factor: float) -> dict[int, list[float]]:
    return {c: [v * factor for v in values] for c, values in CLIENTS.items()}


@pytest.fixture
def three_versions(agent):
    return [
        upload(agent, version="13.3", tps=_scaled(1.0)),
        upload(agent, version="15.4", tps=_scaled(1.12)),
        upload(agent, version="16.1", tps=_scaled(1.2), settings={"shared_buffers": "1GB"}),
    ]


@pytest.mark.django_db(transaction=True)
def test_it_makes_the_compare_chart_table_and_csv_agree_with_the_stored_results(
    live_server, page, three_versions
):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    url = f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,15.4,16.1"
    page.goto(url)
    page.wait_for_selector("#tps-chart .main-svg")
    traces = page.evaluate(
        "Array.from(document.getElementById('tps-chart').data,"
        " t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))"
    )
    assert [t["name"] for t in traces] == ["13.3", "15.4", "16.1"]
    for trace, run in zip(traces, three_versions, strict=True):
        stored = LevelAggregate.objects.filter(run=run).order_by("clients")
        assert trace["x"] == [a.clients for a in stored]
        assert trace["y"] == pytest.approx([a.tps_median for a in stored])
    assert page.locator("#tps-chart .modebar-btn[data-title='Download plot as a PNG']").count()
    # the table shows each stored median, in the evidence, loaded when opened
    assert page.locator("#compare-table").count() == 0
    page.click("#evidence summary")
    page.wait_for_selector("#compare-table")
    table = page.inner_text("#compare-table")
    for run in three_versions:
        for a in LevelAggregate.objects.filter(run=run):
            assert f"{a.tps_median:.1f}" in table
    assert "shared_buffers = 1GB" in page.inner_text("#differences")
    screenshot(page, "compare")
    # the CSV export behind the page's link
    href = page.get_attribute("#export-csv", "href")
    with urllib.request.urlopen(f"{live_server.url}{href}") as response:  # noqa: S310
        lines = list(csv.DictReader(io.StringIO(response.read().decode())))
    assert len(lines) == 3 * len(CLIENTS)
    for line in lines:
        aggregate = LevelAggregate.objects.get(run__uuid=line["run"], clients=line["clients"])
        assert float(line["tps_median"]) == pytest.approx(aggregate.tps_median)
        assert f"{aggregate.tps_median:.1f}" in table
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_restores_the_selection_from_the_permalink_and_submits_the_form_to_it(
    live_server, page, three_versions
):
    page.goto(
        f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,16.1&invalid=1"
    )
    page.wait_for_selector("#tps-chart .main-svg")
    assert page.input_value("#id_workload") == "select-only"
    assert page.input_value("#id_host") == "bench-01"
    checked = page.eval_on_selector_all(
        "input[name=versions]:checked", "els => els.map(e => e.value)"
    )
    assert checked == ["13.3", "16.1"]
    assert page.is_checked("#id_invalid") and not page.is_checked("#id_same_hardware")
    page.check("input[name=versions][value='15.4']")
    page.uncheck("#id_invalid")
    page.click("form.compare-select button[type=submit]")
    page.wait_for_selector("#tps-chart .main-svg")
    assert page.url.endswith("/compare/?workload=select-only&host=bench-01&versions=13.3,15.4,16.1")
    names = page.evaluate("Array.from(document.getElementById('tps-chart').data, t => t.name)")
    assert names == ["13.3", "15.4", "16.1"]


@pytest.mark.django_db(transaction=True)
def test_it_marks_each_version_on_the_history_page(live_server, page, agent):
    for day, (version, factor) in enumerate([("13.3", 1.0), ("14.1", 1.05), ("15.4", 1.1)], 1):
        for repeat in range(2):
            upload(
                agent,
                version=version,
                tps=_scaled(factor + repeat * 0.01),
                started_at=f"2026-11-{day * 3 + repeat:02d}T10:00:00Z",
            )
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/history/?host=bench-01&workload=select-only&clients=4")
    page.wait_for_selector("#history-chart .main-svg")
    names = page.evaluate("Array.from(document.getElementById('history-chart').data, t => t.name)")
    assert names[1:] == ["13.3", "14.1", "15.4"]
    assert page.locator("#history-table tbody tr").count() == 6
    screenshot(page, "history")
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_draws_the_latency_percentiles_against_clients(live_server, page, agent):
    from benchhub.compare.tests.uploads import upload_evidence

    for version, p99 in (("13.3", 4.0), ("15.4", 2.0)):
        upload_evidence(
            agent, version=version, tps={1: [100, 101], 8: [400, 404]}, waits={"CPU": 1.0},
            folded="postgres;main 1\n", p99=p99,
        )  # fmt: skip
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # a permalink to the chart, inside the folded evidence, opens the evidence
    page.goto(
        f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
        "#percentiles"
    )
    page.wait_for_selector("#percentiles-chart .main-svg")
    assert page.evaluate("document.getElementById('evidence').open")
    traces = page.evaluate(
        "Array.from(document.getElementById('percentiles-chart').data,"
        " t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))"
    )
    lines = {t["name"]: (t["x"], t["y"]) for t in traces}
    assert sorted(lines) == [f"{v} {p}" for v in ("13.3", "15.4") for p in ("p50", "p90", "p99")]
    assert lines["13.3 p99"] == ([1, 8], [4.0, 4.0])
    assert lines["15.4 p99"] == ([1, 8], [2.0, 2.0])
    assert page.locator("#knees li.knee").count() == 2
    assert errors == []
