"""The import pages in Chromium: a pasted log that lacks its clients is completed on the page,
and a published table with extra columns is imported by picking its columns."""

import pytest

from benchhub.results.models import Result, Run
from benchhub.testing.browser import screenshot
from benchhub.testing.processes import ROOT

OUTPUT = ROOT / "runners" / "tests" / "fixtures" / "pgbench" / "pg15-select-only-P1-r-T3.txt"
TABLE = (
    "| 模型 | 连接数 | PG 13 tps | PG 14 tps | 14性能提升比率 |\n"
    "|---|---|---|---|---|\n"
    "| 只读 1亿 -c 52 -j 52 -T 120 | 52 | 1234936 | 1582846 | 28.2% |\n"
)


def _sign_in_to(page, base: str, path: str) -> None:
    page.goto(f"{base}/accounts/login/?next={path}")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "bob-pass-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}{path}")


def _pasted_without_clients() -> str:
    """The real output as a README shows it: indented as a code block, its clients line lost."""
    lines = [line for line in OUTPUT.read_text().splitlines() if "number of clients" not in line]
    block = "\n".join(f"    {line}" for line in lines)
    return f"Results on the old box:\n\n{block}\n"


@pytest.mark.django_db(transaction=True)
def test_it_asks_for_the_clients_a_pasted_log_lacks_and_shows_the_run(live_server, page, bob):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _sign_in_to(page, live_server.url, "/import/")
    page.fill("#id_host", "old-box")
    page.fill("#id_pasted", _pasted_without_clients())
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#asked")
    # Exactly the missing field is asked for; the version came from the banner.
    assert page.locator("#asked input").evaluate_all("els => els.map(e => e.name)") == ["clients_0"]
    assert "tps 51755.5" in page.inner_text("#asked")
    screenshot(page, "import-asks-clients")
    page.fill("#id_clients_0", "2")
    page.click("#import-form button[type=submit]")
    page.wait_for_url("**/runs/*/")
    run = Run.objects.get()
    assert (run.build.version, run.clients, run.workload.name) == ("15.20", [2], "select-only")
    assert "Imported from pgbench output" in page.inner_text("main")
    assert "51755.5" in page.inner_text("main")
    page.click("#import-text summary")
    assert "Results on the old box" in page.inner_text("#import-text")
    assert errors == []


@pytest.mark.django_db(transaction=True)
def test_it_imports_a_published_table_by_picking_its_columns(live_server, page, bob):
    _sign_in_to(page, live_server.url, "/import/summary/")
    page.fill("#id_host", "blog-e5")
    page.select_option("#id_builtin", "select-only")
    page.fill("#id_duration_s", "120")
    page.fill("#id_table", TABLE)
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#columns")
    headers = page.locator("#columns tbody tr td:first-child").all_inner_texts()
    assert headers == ["模型", "连接数", "PG 13 tps", "PG 14 tps", "14性能提升比率"]
    screenshot(page, "import-table-columns")
    page.check("input[aria-label='clients: 连接数']")
    page.fill("input[name=version_2]", "13")
    page.fill("input[name=version_3]", "14")
    page.fill("input[name=version_4]", "")
    page.click("#import-form button[type=submit]")
    page.wait_for_url("**/runs/*/")
    runs = {r.build.version: r for r in Run.objects.all()}
    assert set(runs) == {"13", "14"}
    tps = {
        v: dict(Result.objects.filter(run=r).values_list("clients", "tps")) for v, r in runs.items()
    }
    assert tps == {"13": {52: 1234936}, "14": {52: 1582846}}
    assert "Summary import: no raw output" in page.inner_text("main")
