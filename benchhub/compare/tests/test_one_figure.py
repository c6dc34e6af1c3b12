"""One figure per level: the change a comparison prints at a client level is the one its verdict
is made of, on the page (verdict table and per-level table), in the API, the CSV export and the
CLI's text and markdown. The repeats are chosen so that the medians' own ratio differs from it."""

import csv
import io
import re

import pytest
from benchhub_cli.verdict import Verdict, render

from benchhub.compare.tests.uploads import upload
from benchhub.dashboard.tests.sections import section_html

QUERY = "workload=select-only&host=bench-01&versions=13.3,15.4"
# At 1 client the baseline's median is 100 and the version's 120 (+20%), but the geometric
# means of the repeats, which the verdict compares, differ by far less.
BASE = {1: [100.0, 100.0, 160.0], 4: [400.0, 404.0, 396.0]}
OTHER = {1: [120.0, 121.0, 119.0], 4: [440.0, 444.0, 436.0]}


@pytest.fixture
def body(agent, anon_client) -> dict:
    upload(agent, version="13.3", tps=BASE)
    upload(agent, version="15.4", tps=OTHER)
    response = anon_client.get(f"/api/v1/compare/?{QUERY}")
    assert response.status_code == 200, response.content
    return response.json()


def _changes(body: dict) -> dict[int, str]:
    """The change at each level as the API's verdict states it, printed as every place prints it."""
    return {
        level["clients"]: f"{100 * (level['tps_ratio'] - 1):+.1f}%"
        for level in body["verdicts"][0]["levels"]
    }


def _cell(html: str, table: str, clients: int, css: str) -> str:
    """The text of the first cell with class css in the row of clients in the table with id."""
    section = html.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    row = re.search(rf'<tr[^>]*data-clients="{clients}"[^>]*>(.*?)</tr>', section, re.S)
    assert row, f"no row for {clients} clients in #{table}"
    cell = re.search(rf'<td class="[^"]*\b{css}\b[^"]*"[^>]*>(.*?)</td>', row.group(1), re.S)
    assert cell, f"no {css} cell for {clients} clients in #{table}"
    return re.sub(r"<[^>]+>", "", cell.group(1))


def test_it_prints_the_verdicts_change_where_the_medians_say_otherwise(body):
    row = next(r for r in body["rows"] if r["clients"] == 1)
    medians = row["versions"][1]["tps"] / row["versions"][0]["tps"]
    level = next(v for v in body["verdicts"][0]["levels"] if v["clients"] == 1)

    assert medians == pytest.approx(1.2)
    assert abs(level["tps_ratio"] - medians) > 0.05, "the data must tell the two apart"
    assert row["versions"][1]["change_pct"] == pytest.approx(100 * (level["tps_ratio"] - 1))


def test_the_page_the_csv_and_the_cli_print_the_apis_change(anon_client, body):
    changes = _changes(body)
    html = anon_client.get(f"/compare/?{QUERY}").content.decode()
    evidence = section_html(anon_client, f"/compare/?{QUERY}", "evidence")
    export = anon_client.get(f"/api/v1/compare/?{QUERY}&format=csv").content.decode()
    lines = [line for line in csv.DictReader(io.StringIO(export)) if line["change_pct"]]
    verdict = Verdict(body=body, permalink="http://benchhub/compare/", title="select-only")
    text = render(verdict, fmt="text", status=0)
    markdown = render(verdict, fmt="markdown", status=0)

    for clients, change in changes.items():
        assert _cell(html, "verdict-table", clients, "ratio").startswith(change)
        assert _cell(evidence, "compare-table", clients, "change").startswith(change)
        text_row = next(line for line in text.splitlines() if line.split()[:1] == [str(clients)])
        assert change in text_row.split()
        assert f"| {clients} |" in markdown and change in markdown
    assert {int(line["clients"]): f"{float(line['change_pct']):+.1f}%" for line in lines} == (
        changes
    )
