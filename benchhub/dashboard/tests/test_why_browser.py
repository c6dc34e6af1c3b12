"""The Compare page's why section in Chromium: the level, the figures drawn by plotly."""

import pytest

from benchhub.compare.tests.uploads import upload_evidence
from benchhub.testing.browser import screenshot

FOLDED_13 = "postgres;PostgresMain;exec_simple_query 80\npostgres;PostgresMain;LWLockAcquire 20\n"
FOLDED_15 = "postgres;PostgresMain;exec_simple_query 95\npostgres;PostgresMain;LWLockAcquire 5\n"


@pytest.mark.django_db(transaction=True)
def test_it_reads_the_why_section_and_sees_its_charts_drawn(live_server, page, agent):
    upload_evidence(
        agent,
        version="13.3",
        tps={1: [100, 101, 99], 16: [100, 101, 99]},
        waits={"CPU": 0.5, "LWLock:ProcArray": 0.5},
        folded=FOLDED_13,
        p99=4.0,
    )
    upload_evidence(
        agent,
        version="15.4",
        tps={1: [100, 101, 99], 16: [150, 151, 149]},
        waits={"CPU": 0.9, "LWLock:ProcArray": 0.1},
        folded=FOLDED_15,
        p99=2.0,
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # a permalink to the why section opens it, loaded from its own URL
    page.goto(
        f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,15.4#why"
    )
    page.wait_for_selector("#why-waits .main-svg")

    assert page.evaluate("document.getElementById('why').open")
    assert page.get_attribute("#why .why", "data-clients") == "16"
    assert "largest difference the verdicts trust" in page.inner_text(".why-reason")
    waits = page.evaluate(
        "Array.from(document.getElementById('why-waits').data,"
        " t => ({name: t.name, y: Array.from(t.y)}))"
    )
    assert {"name": "LWLock:ProcArray", "y": [50.0, 10.0]} in waits
    for element in ("why-percentiles", "why-histogram"):
        assert page.locator(f"#{element} .main-svg").count() >= 1, element
    # the flame graphs are a section of their own, loaded when opened
    assert page.locator("#why-flame-0").count() == 0
    page.click("#flames summary")
    for element in ("why-flame-0", "why-flame-1"):
        page.wait_for_selector(f"#{element} .main-svg")
    # the icicles draw a box per frame kept: root, postgres, PostgresMain and two leaves
    page.wait_for_selector("#why-flame-diff .main-svg")
    assert page.locator("#why-flame-diff g.slice").count() == 5
    assert "WAL per transaction" in page.inner_text("#why-table")
    screenshot(page, "compare-why")
    assert errors == []
