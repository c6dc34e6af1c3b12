"""The knee of each version's curve and its latency percentiles per level, in the compare API
and on the Compare page, from uploads."""

import json
import re

import pytest

from benchhub.compare.tests.uploads import upload, upload_results
from benchhub.dashboard.tests.sections import section_html
from benchhub.testing.payloads import evidence, result

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
PAGE = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
SATURATES: dict[int, list[float]] = {
    1: [100, 101, 99],
    2: [200, 202, 198],
    4: [205, 199, 201],
    8: [150, 151, 149],
}
GROWS: dict[int, list[float]] = {
    1: [100, 101, 99],
    2: [200, 202, 198],
    4: [400, 404, 396],
    8: [800, 808, 792],
}


def _with_percentiles(agent, version: str, p50: dict[int, list[float]], **overrides):
    """A run of `version` whose repeat r at each level carries p50 p50[clients][r - 1] and p99
    ten times that; tps 100 a repeat."""
    results = [
        result(c, r, 100.0, evidence=evidence(p50_ms=value, p99_ms=value * 10))
        for c, values in p50.items()
        for r, value in enumerate(values, 1)
    ]
    return upload_results(agent, version=version, results=results, **overrides)


def test_it_gives_each_version_its_knee_and_the_rule_that_fired(anon_client, agent):
    upload(agent, version="13.3", tps=SATURATES)
    upload(agent, version="15.4", tps=GROWS)

    series = anon_client.get(URL).json()["series"]

    knee = series[0]["knee"]
    assert (knee["clients"], knee["next_clients"], knee["rule"]) == (2, 4, "tps_not_higher")
    assert knee["tps"] == pytest.approx(200)
    assert knee["p_value"] > 0.05
    assert series[1]["knee"] is None


def test_it_gives_the_median_percentiles_of_the_set_per_level(anon_client, agent):
    # 13.3's set holds two runs: its p50 at 1 client is the median of 1, 2 and 6 ms.
    _with_percentiles(agent, "13.3", {1: [1.0, 2.0], 2: [3.0, 3.0]})
    _with_percentiles(agent, "13.3", {1: [6.0]}, started_at="2026-11-20T09:00:00Z")
    upload(agent, version="15.4", tps={1: [100.0], 2: [100.0]})

    rows = {r["clients"]: r["versions"] for r in anon_client.get(URL).json()["rows"]}

    assert (rows[1][0]["latency_p50_ms"], rows[1][0]["latency_p99_ms"]) == (2.0, 20.0)
    assert rows[1][0]["latency_p90_ms"] == pytest.approx(3.0)
    assert rows[2][0]["latency_p50_ms"] == 3.0
    # no sampled transaction log: null, not zero
    assert rows[1][1]["latency_p50_ms"] is None and rows[2][1]["latency_p99_ms"] is None


def _figure(html: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    assert match, f"no {element_id}"
    return json.loads(match.group(1))


def test_the_page_states_each_knee_and_draws_the_percentiles_after_the_charts(client, agent):
    _with_percentiles(agent, "13.3", {1: [1.0, 1.0], 2: [2.0, 2.0]})
    upload(agent, version="15.4", tps=GROWS)

    page = client.get(PAGE).content.decode()
    html = section_html(client, PAGE, "evidence")

    knees = re.findall(r'<li class="knee">(.*?)</li>', html)
    assert knees == [
        "13.3: knee at 1 clients (100 tps): at 2 clients tps is not significantly higher "
        "(too few distinct repeats for a test: not higher at all).",
        "15.4: no knee, tps grows at every level measured, up to 8 clients.",
    ]
    figure = _figure(html, "evidence-figures")["percentiles-chart"]
    lines = {t["name"]: (t["x"], t["y"]) for t in figure["data"]}
    assert lines["13.3 p50"] == ([1, 2], [1.0, 2.0])
    assert lines["13.3 p99"] == ([1, 2], [10.0, 20.0])
    assert "15.4 p50" not in lines
    # answer first: the verdicts, then the tps and latency charts, and only then the evidence
    # (the knees and the percentiles), folded
    order = [page.index(i) for i in ('id="verdicts"', 'id="tps-chart"', 'id="latency-chart"',
                                     '<details class="section lazy" id="evidence"')]  # fmt: skip
    assert order == sorted(order)
    assert 'id="knees"' not in page and 'id="percentiles-chart"' not in page


def test_the_page_says_when_no_run_has_percentiles(client, agent):
    upload(agent, version="13.3", tps={1: [100.0], 2: [150.0]})
    upload(agent, version="15.4", tps={1: [100.0], 2: [150.0]})

    html = section_html(client, PAGE, "evidence")

    assert 'id="no-percentiles"' in html and "percentiles-chart" not in _figure(
        html, "evidence-figures"
    )
