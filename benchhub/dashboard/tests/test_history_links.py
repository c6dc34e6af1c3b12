"""History is one click from every level: each row of the Compare page's level tables and each
level of a run's page links the series of that host and workload at that level."""

import re

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Run
from benchhub.testing.processes import ROOT

FIXTURES = ROOT / "runners" / "tests" / "fixtures" / "pgbench"
SELECT_ONLY = (FIXTURES / "pg15-select-only-P1-r-T3.txt").read_text()
PERMALINK = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
LINK = r'<a class="history-link small" href="([^"]+)"'


def rows_of(html: str, table_id: str) -> list[str]:
    body = html.split(f'id="{table_id}"')[1].split("<tbody>")[1].split("</tbody>")[0]
    return body.split("<tr")[1:]


def test_it_links_every_compared_level_to_its_history(client, agent):
    upload(agent, version="13.3", tps={1: [100, 110], 4: [380, 390]})
    upload(agent, version="15.4", tps={1: [100, 112], 4: [385, 395]})
    pages = {
        "verdict-table": client.get(PERMALINK).content.decode(),
        # The per-level table is in the folded evidence section, read from its own URL.
        "compare-table": client.get(
            PERMALINK.replace("/compare/", "/compare/evidence/")
        ).content.decode(),
    }
    for table, html in pages.items():
        rows = rows_of(html, table)
        assert len(rows) == 2, table
        for row, clients in zip(rows, (1, 4), strict=True):
            (href,) = re.findall(LINK, row)
            href = href.replace("&amp;", "&")
            assert href == f"/history/?host=bench-01&workload=select-only&clients={clients}"
    history = client.get("/history/?host=bench-01&workload=select-only&clients=4").content
    assert all(f"/runs/{run.uuid}/" in history.decode() for run in Run.objects.all())


def test_it_links_each_run_level_to_its_history(client, bob):
    client.force_login(bob)
    response = client.post(
        "/import/",
        {"version": "15.4", "host": "old-box", "pasted": f"{SELECT_ONLY}\n---\n{SELECT_ONLY}"},
    )
    run = Run.objects.get()
    html = client.get(response.url).content.decode()
    links = re.findall(r'<a class="history-link small" href="([^"]+)">', html)
    assert len(links) == len(set(run.clients)) >= 1
    for href, clients in zip(links, sorted(set(run.clients)), strict=True):
        href = href.replace("&amp;", "&")
        assert f"clients={clients}" in href and "host=old-box" in href
        history = client.get(href)
        assert history.status_code == 200
        assert f"/runs/{run.uuid}/" in history.content.decode()
