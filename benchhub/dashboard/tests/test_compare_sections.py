"""The Compare page's first screen and its folded sections, each at its own URL, rendered by the
test client."""

import re

import pytest

from benchhub.compare.tests.uploads import upload, upload_evidence
from benchhub.dashboard.tests.sections import section_get, section_html, section_url

PERMALINK = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
SECTIONS = ("evidence", "why", "flames", "statements", "method")
FOLDED = "postgres;PostgresMain;exec_simple_query 80\npostgres;PostgresMain;LWLockAcquire 20\n"
# perf could not name the server's frames: a build without symbols.
STRIPPED = "postgres;[unknown];[unknown] 70\npostgres;[postgres] 20\npostgres;PostgresMain 10\n"


def _evidence(agent, version: str, folded: str, tps: dict[int, list[float]]):
    return upload_evidence(
        agent, version=version, tps=tps, waits={"CPU": 1.0}, folded=folded, p99=2.0
    )


@pytest.fixture
def compared(agent):
    _evidence(agent, "13.3", FOLDED, {1: [100, 101, 99], 8: [100, 101, 99]})
    _evidence(agent, "15.4", STRIPPED, {1: [100, 101, 99], 8: [150, 151, 149]})


def test_it_shows_the_verdicts_and_charts_and_folds_the_rest(client, compared):
    html = client.get(PERMALINK).content.decode()

    order = [html.index(i) for i in ('id="verdict-table"', 'id="tps-chart"', 'id="latency-chart"')]
    assert order == sorted(order)
    folded = re.findall(r'<details class="section lazy" id="([a-z]+)" data-src="([^"]+)"', html)
    assert [name for name, _ in folded] == list(SECTIONS)
    for name, src in folded:
        assert src.replace("&amp;", "&") == section_url(PERMALINK, name)
        own_page = section_url(PERMALINK, name, fragment=False).replace("&", "&amp;")
        assert f'<a class="section-page" href="{own_page}">' in html  # without scripts
    # what the sections hold is not on the page until opened
    for inside in ('id="compare-table"', 'id="why-table"', "why-statements", 'id="how-computed"'):
        assert inside not in html
    assert "why-figures" not in html and "percentiles-chart" not in html


def test_it_serves_each_section_alone_and_as_a_page(client, compared):
    for name in SECTIONS:
        fragment = section_get(client, PERMALINK, name)
        page = section_get(client, PERMALINK, name, fragment=False)
        assert fragment.status_code == page.status_code == 200, name
        alone = fragment.content.decode()
        assert "<html" not in alone and f'id="{name}-figures"' in alone
        whole = page.content.decode()
        assert "<html" in whole and 'id="back-to-verdicts"' in whole
        assert f'href="{PERMALINK.replace("&", "&amp;")}"' in whole
        assert "js/compare" in whole  # the page draws the section's figures itself
    assert 'id="compare-table"' in section_html(client, PERMALINK, "evidence")
    assert 'id="why-table"' in section_html(client, PERMALINK, "why")
    assert "why-statements" in section_html(client, PERMALINK, "statements")
    assert 'id="how-computed"' in section_html(client, PERMALINK, "method")


def test_it_keeps_the_why_level_asked_for_in_every_section(client, compared):
    html = client.get(f"{PERMALINK}&why=1").content.decode()
    assert section_url(f"{PERMALINK}&why=1", "why").replace("&", "&amp;") in html
    assert 'data-clients="1"' in section_html(client, f"{PERMALINK}&why=1", "why")
    assert "At 1 clients" in section_html(client, f"{PERMALINK}&why=1", "flames")


def test_it_names_the_bad_parameter_in_a_section(client, agent):
    response = section_get(client, "/compare/?workload=select-only&host=bench-01", "why")
    assert response.status_code == 400
    assert "<strong>versions</strong>" in response.content.decode()


def test_it_has_no_section_by_another_name(client, compared):
    assert section_get(client, PERMALINK, "everything").status_code == 404


def test_it_says_when_a_profile_has_no_symbols_and_what_to_install(client, compared):
    html = section_html(client, PERMALINK, "flames")

    notes = re.findall(r'<p class="banner warn no-symbols" data-version="([^"]+)">', html)
    assert notes == ["15.4"]  # 90% of its samples end in a frame without a symbol; 13.3 none
    assert "90% of the profile's samples" in html
    assert "--enable-debug" in html and "postgresql-15-dbgsym" in html
    assert "flames-figures" in html and "why-flame-1" in html  # still drawn


def test_the_run_page_says_when_its_profile_has_no_symbols(client, agent):
    run = _evidence(agent, "15.4", STRIPPED, {1: [100.0]})
    html = client.get(f"/runs/{run.uuid}/").content.decode()
    assert html.count('class="banner warn no-symbols"') == 1
    plain = _evidence(agent, "13.3", FOLDED, {1: [100.0]})
    assert "no-symbols" not in client.get(f"/runs/{plain.uuid}/").content.decode()


def test_it_offers_each_version_once_as_people_name_them(client, agent):
    upload(agent, version="13.23", tps={1: [100]})
    upload(agent, version="14.23", tps={1: [110]})
    upload(agent, version="14.23+fix", tps={1: [120]})

    html = client.get(
        "/compare/?workload=select-only&host=bench-01&versions=13,14"
    ).content.decode()

    boxes = re.findall(r'type="checkbox" name="versions" value="([^"]+)"( checked)?', html)
    assert [(v, bool(c)) for v, c in boxes] == [
        ("13", True),
        ("14", True),
        ("13.23", False),
        ("14.23", False),
        ("14.23+fix", False),
    ]
    majors, exact = html.index('data-group="Major versions"'), html.index('data-group="Exact')
    assert majors < html.index('value="13"') < exact < html.index('value="13.23"')


def test_it_says_in_plain_words_what_a_column_lacks(client, agent):
    upload(agent, version="13.3", tps={1: [100, 101], 2: [150, 160]})
    upload(agent, version="15.4", tps={1: [100, 103], 2: [150, 170]})
    html = client.get(PERMALINK).content.decode()
    table = html[html.index('id="verdict-table"') : html.index("</table>")]

    assert "needs 4 repeats a side" in table and "from 4 a side" not in table
    assert ">many<" not in table
    for anchor in ("method-rank", "method-settle", "method-visible"):
        assert f'#{anchor}" data-anchor="{anchor}"' in table
        assert f'id="{anchor}"' in section_html(client, PERMALINK, "method")
