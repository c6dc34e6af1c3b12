"""The Compare page's why section and the run page's evidence, rendered by the test client
from synthetic uploads that carry evidence."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from benchhub.compare.tests.uploads import upload, upload_evidence, upload_results
from benchhub.dashboard.tests.sections import section_get, section_html
from benchhub.results.models import Run
from benchhub.testing.payloads import evidence, result

PERMALINK = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
FOLDED_13 = "postgres;PostgresMain;exec_simple_query 80\npostgres;PostgresMain;LWLockAcquire 20\n"
FOLDED_15 = "postgres;PostgresMain;exec_simple_query 95\npostgres;PostgresMain;LWLockAcquire 5\n"
WAITS_13 = {"CPU": 0.5, "LWLock:ProcArray": 0.4, "Lock:transactionid": 0.1}
WAITS_15 = {"CPU": 0.9, "LWLock:ProcArray": 0.05, "Lock:transactionid": 0.05}


def _figures(html: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    assert match, f"no {element_id}"
    return json.loads(match.group(1))


def _upload(agent, version: str, tps: dict[int, list[float]]) -> Run:
    if version == "13.3":
        return upload_evidence(
            agent, version=version, tps=tps, waits=WAITS_13, folded=FOLDED_13, p99=4.0
        )
    return upload_evidence(
        agent, version=version, tps=tps, waits=WAITS_15, folded=FOLDED_15, p99=2.0
    )


@pytest.fixture
def compared(agent):
    """15.4 clearly faster at 8 clients (+50%), a little at 32 (+20%), the same at 1."""
    old = _upload(agent, "13.3", {1: [100, 101, 99], 8: [100, 101, 99], 32: [100, 101, 99]})
    new = _upload(agent, "15.4", {1: [100, 101, 99], 8: [150, 151, 149], 32: [120, 121, 119]})
    return old, new


def test_it_explains_the_level_with_the_largest_trusted_difference(client, compared):
    html = section_html(client, PERMALINK, "why")

    assert '<div class="why" data-clients="8">' in html
    assert "8 clients: the largest difference the verdicts trust (15.4 faster" in html
    figures = _figures(html, "why-figures")
    waits = {trace["name"]: trace["y"] for trace in figures["why-waits"]["data"]}
    assert waits["LWLock:ProcArray"] == [40.0, 5.0] and waits["CPU"] == [50.0, 90.0]
    assert figures["why-waits"]["layout"]["barmode"] == "stack"
    assert {"why-percentiles", "why-histogram"} <= set(figures)
    flames = _figures(section_html(client, PERMALINK, "flames"), "flames-figures")
    assert set(flames) == {"why-flame-0", "why-flame-1", "why-flame-diff"}
    assert flames["why-flame-0"]["data"][0]["type"] == "icicle"


def test_it_shows_each_version_figures_per_transaction_side_by_side(client, compared):
    html = section_html(client, PERMALINK, "why")
    table = html[
        html.index('id="why-table"') : html.index("</table>", html.index('id="why-table"'))
    ]

    # WAL bytes / transactions pgbench counted (tps x 2 in the payload), median over repeats.
    assert f'<td class="num">{123456 / 200:.0f}</td><td class="num">{123456 / 300:.0f}</td>' in (
        table
    )
    assert "checkpoints during the measurement" in table and "1, 1, 1" in table
    assert "client-bound" in table and "35.0" in table  # client CPU
    assert "host CPU iowait" in table and "2.0" in table
    assert "evidence from repeats 1, 2, 3" in html
    assert "profile from repeat 1&#x27;s extra pass (perf, 99 Hz, 10.0 s)" in html
    statements = section_html(client, PERMALINK, "statements")
    assert "SELECT abalance FROM pgbench_accounts WHERE aid = $1" in statements


@pytest.mark.parametrize("asked", ["", "&why=32"])
def test_it_gives_the_api_the_why_section_the_page_shows(client, anon_client, compared, asked):
    page = section_get(client, PERMALINK + asked, "why")
    html = page.content.decode()
    statements = section_html(client, PERMALINK + asked, "statements")
    why = anon_client.get(PERMALINK.replace("/compare/", "/api/v1/compare/") + asked).json()["why"]

    assert (why["clients"], why["reason"]) == (
        page.context["why"].clients,
        page.context["why"].reason,
    )
    assert f'data-clients="{why["clients"]}"' in html and escape(why["reason"]) in html
    assert why["clients"] == (32 if asked else 8)
    assert why["rows"] == page.context["why_rows"]
    assert (
        [side["label"] for side in why["sides"]] == page.context["why_labels"] == ["13.3", "15.4"]
    )
    assert [side["caption"] for side in why["sides"]] == page.context["why_captions"]
    assert all(escape(side["caption"]) in html for side in why["sides"])
    assert [side["checkpoints"] for side in why["sides"]] == page.context["why_checkpoints"]
    waits = [side["waits"] for side in why["sides"]]
    assert waits == [pytest.approx(WAITS_13), pytest.approx(WAITS_15)]
    assert why["sides"][0]["statements"]
    assert all(escape(s["query"]) in statements for s in why["sides"][0]["statements"])
    assert [side["profiled"] for side in why["sides"]] == [True, True]


def test_it_shows_the_level_asked_for(client, compared):
    html = section_html(client, f"{PERMALINK}&why=32", "why")

    assert 'data-clients="32"' in html and "32 clients, as asked." in html
    query = PERMALINK.split("?")[1].replace("&", "&amp;")
    assert f'<a href="/compare/?{query}&amp;why=8#why">8</a>' in html


def test_it_shows_the_largest_level_when_no_verdict_is_trusted(client, agent):
    _upload(agent, "13.3", {1: [100, 101, 99], 4: [100, 101, 99]})
    _upload(agent, "15.4", {1: [100, 101, 99], 4: [100, 101, 99]})

    html = section_html(client, PERMALINK, "why")

    assert 'data-clients="4"' in html
    assert "no level has a faster or slower verdict, so the largest level is shown" in html


def test_it_draws_p50_and_p99_over_clients_beside_the_average(client, compared):
    figures = _figures(section_html(client, PERMALINK, "why"), "why-figures")

    lines = {t["name"]: (t["x"], t["y"]) for t in figures["why-percentiles"]["data"]}
    assert lines["13.3 p99"] == ([1, 8, 32], [4.0, 4.0, 4.0])
    assert lines["15.4 p99"] == ([1, 8, 32], [2.0, 2.0, 2.0])
    assert lines["15.4 p50"][1] == [1.2, 1.2, 1.2]
    assert lines["13.3 average"][0] == [1, 8, 32]


def test_it_says_when_the_runs_carry_no_evidence(client, agent):
    upload(agent, version="13.3", tps={1: [100], 2: [150]})
    upload(agent, version="15.4", tps={1: [100], 2: [150]})

    html = section_html(client, PERMALINK, "why")

    assert "No evidence at this level" in html
    flames = section_html(client, PERMALINK, "flames")
    assert _figures(flames, "flames-figures") == {}
    assert "No CPU profile" in flames


def test_it_escapes_what_the_agent_sent(client, agent):
    results = [
        result(1, 1, 100.0, evidence=evidence(query="SELECT '<script>alert(1)</script>'")),
    ]
    upload_results(agent, version="13.3", results=results)
    upload_results(agent, version="15.4", results=[result(1, 1, 100.0)])

    html = section_html(client, PERMALINK, "statements")

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


def test_the_why_section_costs_a_fixed_number_of_queries(client, agent, django_assert_num_queries):
    _upload(agent, "13.3", {1: [100], 2: [150]})
    _upload(agent, "15.4", {1: [100], 2: [150]})
    # The state of the runs it comes from (the cache's key), then the comparison's 7, the why
    # section's two reads, the latency percentiles' one.
    with django_assert_num_queries(1 + 10) as few:
        section_get(client, PERMALINK, "why")
    count = len(few.captured_queries)  # now: the query log is a ring the uploads would wrap
    levels = {c: [100.0, 110.0, 120.0] for c in (1, 2, 4, 8, 16, 32)}
    _upload(agent, "13.3", levels)
    _upload(agent, "15.4", levels)
    _upload(agent, "16.2", levels)
    with django_assert_num_queries(count):
        html = section_html(client, f"{PERMALINK},16.2", "why")
    assert len(_figures(html, "why-figures")["why-waits"]["data"][0]["x"]) == 3


def test_the_run_page_shows_the_evidence_of_every_level(client, compared):
    old, _ = compared
    html = client.get(f"/runs/{old.uuid}/").content.decode()

    for clients in (1, 8, 32):
        assert f'id="evidence-{clients}"' in html
    charts = client.get(f"/runs/{old.uuid}/charts/").json()
    figures = {chart["id"]: chart["figure"] for chart in charts}
    assert figures["evidence-8-waits"]["data"][1]["name"] == "LWLock:ProcArray"
    assert figures["evidence-8-flame"]["data"][0]["type"] == "icicle"
    assert "evidence-8-histogram" in figures
    assert "LWLock:ProcArray" in html and "p99.9" in html
    assert "SELECT abalance FROM pgbench_accounts WHERE aid = $1" in html


def test_the_run_page_reads_evidence_in_a_fixed_number_of_queries(
    client, agent, django_assert_num_queries
):
    small = _upload(agent, "13.3", {1: [100]})
    big = _upload(agent, "15.4", {c: [100.0, 110.0] for c in (1, 2, 4, 8)})
    with CaptureQueriesContext(connection) as few:
        client.get(f"/runs/{small.uuid}/")
    count = len(few.captured_queries)
    with django_assert_num_queries(count):
        client.get(f"/runs/{big.uuid}/")


def test_it_links_the_level_that_was_profiled_when_the_shown_one_was_not(client, agent):
    from benchhub.compare.tests.uploads import evidence_result

    for version in ("13.3", "15.4"):
        results = [
            evidence_result(
                c, 1, 100.0, waits=WAITS_13, folded=FOLDED_13 if c == 8 else None, p99=4
            )
            for c in (1, 8)
        ]
        upload_results(agent, version=version, results=results)

    html = section_html(client, f"{PERMALINK}&why=1", "flames")

    assert "The CPU profiles were taken at" in html
    assert '&amp;why=8#flames">8 clients</a>' in html
    assert "why-flame-0" not in _figures(html, "flames-figures")
