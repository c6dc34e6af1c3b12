"""The Experiments pages and the presentation sections of the Compare page and API."""

import json
import re

from benchhub.compare.tests.experiment_data import (
    e2_idle_upload,
    e2_sweep_upload,
    e3_upload,
    e3_workload,
    e4_upload,
    e5_upload,
)
from benchhub.compare.tests.uploads import upload
from benchhub.dashboard.tests.sections import section_html
from benchhub.results.models import Run

E5_PAGE = "/experiments/e5/?host=bench-01&versions=13.3,14beta1"
E2_PAGE = "/experiments/e2/?host=bench-01&versions=13.3,14beta1"


def _json(html: str, element_id: str):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    return json.loads(match.group(1))


def _e5(agent, versions=("13.3", "14beta1")):
    for index, version in enumerate(versions):
        for entry in ("e5-read-only", "e5-tpcb-like"):
            e5_upload(
                agent,
                entry=entry,
                version=version,
                tps={52: [1000.0 + 200 * index], 208: [1500.0 + 500 * index]},
            )


def _e2(agent, versions=("13.3", "14beta1")):
    for index, version in enumerate(versions):
        e2_idle_upload(
            agent, version=version, tps=[100.0 + 100 * index, 120.0], established=[9000, 9000]
        )
        e2_sweep_upload(agent, version=version, tps={64: 500.0, 128: 600.0 + 100 * index})


def test_it_describes_each_experiment_and_links_what_ran_in_the_index(client, agent):
    _e5(agent)
    html = client.get("/experiments/").content.decode()
    for number in range(1, 6):
        assert f'id="experiment-e{number}"' in html
    assert "idle connections" in html
    assert 'href="/experiments/e5/?host=bench-01&amp;versions=13.3,14beta1"' in html
    assert "Not run yet." in html
    assert '<a href="/experiments/">Experiments</a>' in html  # in the site nav


def test_it_stacks_both_models_in_one_improvement_table_on_the_e5_page(client, agent):
    _e5(agent)
    html = client.get(E5_PAGE).content.decode()
    table = html[
        html.index('id="improvement-table"') : html.index(
            "</table>", html.index('id="improvement-table"')
        )
    ]
    assert table.count('data-model="read-only"') == 2
    assert table.count('data-model="tpcb-like"') == 2
    assert "tps 13.3 (old)" in table and "tps 14beta1 (new)" in table
    assert "2,000.0" in table and "33.3%" in table  # 208 clients: 1500 -> 2000
    assert ">104<" in table  # threads of the 208-client level
    assert "Xeon(R) Silver 4210R" in html and "scale 1000" in html  # measured on
    assert 'id="differences"' not in html


def test_it_shows_connections_progress_and_limits_on_the_e2_page(client, agent):
    _e2(agent)
    html = client.get(E2_PAGE).content.decode()
    assert "9128" in html  # 9000 idle + 128 measured
    assert 'id="client-limits"' in html and "11000" in html and "65536 / 1048576" in html
    figures = _json(html, "presentation-figures")
    assert len(figures) == 2  # one progress chart per workload
    idle = next(
        f for f in figures.values() if "e2-idle-connections" in f["layout"]["title"]["text"]
    )
    assert [t["name"] for t in idle["data"]] == ["13.3 (repeat 1)", "14beta1 (repeat 2)"]
    assert idle["layout"]["yaxis"]["title"]["text"] == "tps per 2 s interval"


def test_it_escapes_what_the_agent_sent_on_the_e3_page(client, agent):
    workload = e3_workload("uuid", 0, note="<script>alert(1)</script>")
    e3_upload(agent, version="9.2.4", workload=workload, tps=[3500], iowait=[[20, 40]])
    html = client.get("/experiments/e3/?host=bench-01&versions=9.2.4").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'id="evidence-table"' in html and "30.0" in html  # mean iowait


def test_it_shows_each_streams_rows_per_second_on_the_e4_page(client, agent):
    e4_upload(agent, version="10.1", writer=[1900.0], consumer=[4200.0])
    html = client.get("/experiments/e4/?host=bench-01&versions=10.1").content.decode()
    assert 'data-stream="writer"' in html and 'data-stream="consumer"' in html
    assert "1,900,000" in html and "4,200,000" in html
    assert "rows/s = tps \u00d7 rows per transaction" in html


def test_it_draws_one_chart_per_workload_on_the_e1_page(client, agent):
    for name in ("e1-pk-lookup", "e1-insert"):
        workload = {
            "name": name,
            "scripts": [{"name": "s", "body": "select 1;"}],
            "catalog_entry": name,
        }
        for version in ("9.5.4", "9.6.0"):
            upload(agent, version=version, tps={16: [100.0], 32: [180.0]}, workload=workload)
    html = client.get("/experiments/e1/?host=bench-01&versions=9.5.4,9.6.0").content.decode()
    figures = _json(html, "presentation-figures")
    assert [f["layout"]["title"]["text"] for f in figures.values()] == [
        "tps: e1-pk-lookup",
        "tps: e1-insert",
    ]
    assert all([t["name"] for t in f["data"]] == ["9.5.4", "9.6.0"] for f in figures.values())


def test_it_shows_the_differences_banner(client, agent):
    e4_upload(agent, version="10.1", writer=[1900.0], consumer=[4200.0])
    run = e4_upload(agent, version="11.1", writer=[1900.0], consumer=[4200.0])
    run.__class__.objects.filter(id=run.id).update(scale=50)
    html = client.get("/experiments/e4/?host=bench-01&versions=10.1,11.1").content.decode()
    assert 'id="differences"' in html and "<strong>scale</strong>" in html


def test_it_redirects_the_form_to_the_permalink_and_names_bad_parameters(client, agent):
    response = client.get("/experiments/e5/?host=bench-01&versions=13.3&versions=14beta1")
    assert response.status_code == 302
    assert response["Location"] == E5_PAGE
    html = client.get("/experiments/e5/?host=nowhere&versions=13.3").content.decode()
    assert "<strong>host</strong>" in html
    assert client.get("/experiments/e9/").status_code == 404


def test_it_adds_the_workload_presentation_to_the_compare_page_and_api(client, agent):
    _e2(agent)
    query = "workload=e2-idle-connections&host=bench-01&versions=13.3,14beta1"
    html = section_html(client, f"/compare/?{query}", "evidence")
    assert 'id="connections-table"' in html and "9128" in html
    assert len(_json(html, "presentation-figures")) == 1
    body = client.get(f"/api/v1/compare/?{query}").json()
    connections = body["presentation"]["connections"]
    assert body["presentation"]["presentation"] == "connections"
    assert [(r["idle"], r["clients"], r["connections"]) for r in connections["rows"]] == [
        (9000, 128, 9128)
    ]


def test_it_makes_a_bounded_number_of_queries_on_the_experiment_pages(
    client, agent, django_assert_max_num_queries
):
    _e5(agent)
    _e2(agent)
    # the form's choices 1; host, runs, aggregates, threads 4; the improvement table's threads 1;
    # the experiment's jobs queued or running 1
    with django_assert_max_num_queries(7):
        assert client.get(E5_PAGE).status_code == 200
    # ... and streams 1, the progress chart's results 1 and samples 1 instead
    with django_assert_max_num_queries(9):
        assert client.get(E2_PAGE).status_code == 200
    _e5(agent, versions=("15.1", "16.1", "17.0"))
    _e2(agent, versions=("15.1", "16.1", "17.0"))
    with django_assert_max_num_queries(7):
        assert client.get(E5_PAGE + ",15.1,16.1,17.0").status_code == 200
    with django_assert_max_num_queries(9):
        assert client.get(E2_PAGE + ",15.1,16.1,17.0").status_code == 200
    # what ran 1, the jobs queued or running 1
    with django_assert_max_num_queries(2):
        assert client.get("/experiments/").status_code == 200


def test_it_shows_the_host_with_the_newest_runs_when_none_is_chosen(client, agent, other_agent):
    _e5(agent)
    for version, tps in (("13.3", 900.0), ("14.1", 990.0)):
        for entry in ("e5-read-only", "e5-tpcb-like"):
            e5_upload(other_agent, entry=entry, version=version, tps={52: [tps]})
    Run.objects.filter(host__name="bench-02").update(started_at="2026-11-21T10:00:00Z")

    html = client.get("/experiments/e5/").content.decode()

    assert "Showing <strong>bench-02</strong>, the host with the newest runs" in html
    assert 'value="bench-02" selected' in html
    table = html[html.index('id="improvement-table"') :]
    table = table[: table.index("</table>")]
    assert "tps 13.3 (old)" in table and "tps 14.1 (new)" in table
    assert "990.0" in table and "10.0%" in table
    # A chosen host keeps its choice, and takes every version it ran.
    chosen = client.get("/experiments/e5/?host=bench-01").content.decode()
    assert "chosen-for-you" not in chosen
    assert "13.3 vs 14beta1" in chosen


def test_it_says_nothing_ran_when_no_host_has_runs(client, db):
    html = client.get("/experiments/e5/").content.decode()
    assert "chosen-for-you" not in html
    assert "choose a host with runs of this experiment" in html
