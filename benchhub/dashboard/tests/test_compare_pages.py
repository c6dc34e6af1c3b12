"""The Compare and History pages, rendered by the test client."""

import json
import re

from django.contrib.auth import get_user_model
from django.template import Context, Template

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Run
from benchhub.review.keys import comparison_key
from benchhub.review.services import comment_add

PERMALINK = "/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"


def _figure(html: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    return json.loads(match.group(1))


def test_it_draws_one_trace_per_version_from_the_stored_medians(client, agent):
    upload(agent, version="13.3", tps={1: [100, 110], 2: [180, 190]})
    upload(agent, version="15.4", tps={1: [200, 210], 2: [380, 390]}, scale=10)
    html = client.get(PERMALINK).content.decode()
    figure = _figure(html, "tps-figure")
    assert [(t["name"], t["x"], t["y"]) for t in figure["data"]] == [
        ("13.3", [1, 2], [105.0, 185.0]),
        ("15.4", [1, 2], [205.0, 385.0]),
    ]
    assert figure["config"]["displayModeBar"] is True
    assert "These runs differ in more than the version" in html and "scale" in html
    assert "Xeon(R) Silver 4210R" in html  # the caption says what it was measured on


def test_it_redirects_checkbox_versions_to_the_permalink(client, agent):
    upload(agent, version="13.3", tps={1: [100]})
    response = client.get(
        "/compare/?workload=select-only&host=bench-01&versions=13.3&versions=15.4&invalid=1"
    )
    assert response.status_code == 302
    assert response["Location"] == PERMALINK + "&invalid=1"


def test_it_names_the_bad_parameter_on_the_page(client, agent):
    html = client.get("/compare/?workload=select-only&host=bench-01").content.decode()
    assert "<strong>versions</strong>" in html


def test_it_makes_a_fixed_number_of_queries(client, agent, django_assert_num_queries):
    upload(agent, version="13.3", tps={1: [100], 2: [150]})
    upload(agent, version="15.4", tps={1: [100], 2: [150]})
    # 1 for the state of the runs the comparison comes from (its cache's key), 1 for the
    # comparison comment thread (authors joined in), 1 for the form's lists, cached under the
    # newest run (3 more when it changed: the first view); on the comparison's first view, 7
    # more for it (3 of them the verdicts: the runs each version pools, their repeats, the host
    # history). The why section and the latency percentiles are read by their folded sections.
    with django_assert_num_queries(3 + 7 + 3):
        assert client.get(PERMALINK).status_code == 200
    with django_assert_num_queries(3):
        assert client.get(PERMALINK).status_code == 200
    for day in range(1, 10):
        for version in ("13.3", "15.4"):
            upload(agent, version=version, tps={1: [100]}, started_at=f"2026-10-{day:02d}T10:00Z")
    assert Run.objects.count() == 20
    author = get_user_model().objects.create_user("carol")
    for number in range(5):
        comment_add(author=author, body=f"note {number}", comparison_key=comparison_key(PERMALINK))
    with django_assert_num_queries(3 + 7 + 3):
        assert client.get(PERMALINK).status_code == 200
    with django_assert_num_queries(3):
        assert client.get(PERMALINK).status_code == 200


def test_it_marks_each_version_in_history(client, agent):
    upload(agent, version="13.3", tps={4: [100, 110]}, started_at="2026-11-01T10:00:00Z")
    upload(agent, version="15.4", tps={4: [200, 210]}, started_at="2026-11-02T10:00:00Z")
    html = client.get("/history/?host=bench-01&workload=select-only&clients=4").content.decode()
    figure = _figure(html, "history-figure")
    assert [(t["name"], t["y"]) for t in figure["data"][1:]] == [
        ("13.3", [105.0]),
        ("15.4", [205.0]),
    ]


def test_it_lists_each_point_of_the_history_with_its_run(client, agent):
    old = upload(agent, version="13.3", tps={4: [100, 110.04]}, started_at="2026-11-01T10:07:00Z")
    new = upload(agent, version="15.4", tps={4: [200]}, started_at="2026-11-02T10:00:00Z")
    html = client.get("/history/?host=bench-01&workload=select-only&clients=4").content.decode()
    table = html[html.index('id="history-table"') :]
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>\s*<td><a href=\"(.*?)\">(.*?)</a>"
                      r"</td>\s*<td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      table)  # fmt: skip
    assert rows == [
        ("2026-11-01 10:07", "13.3", f"/runs/{old.uuid}/", str(old.uuid)[:8],
         "105.0", "100.0", "110.0", "2"),
        ("2026-11-02 10:00", "15.4", f"/runs/{new.uuid}/", str(new.uuid)[:8],
         "200.0", "200.0", "200.0", "1"),
    ]  # fmt: skip


def test_it_names_a_bad_clients_parameter_in_history(client, agent):
    response = client.get("/history/?host=bench-01&workload=select-only&clients=x")
    assert response.status_code == 400
    assert "<strong>clients</strong>" in response.content.decode()


def test_it_labels_summary_imports_and_invalid_runs_when_asked_for(client, agent):
    upload(agent, version="13.3", tps={1: [100]}, source="summary")
    bad = upload(agent, version="15.4", tps={1: [200]})
    Run.objects.filter(id=bad.id).update(invalid=True)
    html = client.get(PERMALINK).content.decode()
    assert "No aggregated run found for: 15.4" in html
    html = client.get(PERMALINK + "&invalid=1").content.decode()
    names = [t["name"] for t in _figure(html, "tps-figure")["data"]]
    assert names == ["13.3 (summary import)", "15.4 (marked invalid)"]


def test_it_offers_what_exists_on_the_empty_compare_page(client, agent):
    upload(agent, version="13.3", tps={1: [100]})
    html = client.get("/compare/").content.decode()
    assert 'value="13.3"' in html and 'value="bench-01"' in html and 'value="select-only"' in html


def test_it_marks_the_selection_among_the_options(client, agent):
    upload(agent, version="13.3", tps={1: [100]})
    html = client.get(PERMALINK).content.decode()
    assert '<option value="bench-01" selected>bench-01</option>' in html
    assert '<option value="select-only" selected>select-only</option>' in html


def test_it_escapes_every_option():
    template = Template("{% load choices %}{% select_options names chosen %}")
    html = template.render(Context({"names": ["a", '<b x="1">'], "chosen": '<b x="1">'}))
    assert html == (
        '<option value="a">a</option>'
        '<option value="&lt;b x=&quot;1&quot;&gt;" selected>&lt;b x=&quot;1&quot;&gt;</option>'
    )


def test_it_offers_a_version_as_soon_as_its_run_is_stored(client, agent):
    # The form's lists are cached under the newest run: the next run must show in them.
    upload(agent, version="13.3", tps={1: [100]})
    assert 'value="15.4"' not in client.get("/compare/").content.decode()
    upload(agent, version="15.4", tps={1: [100]})
    assert 'value="15.4"' in client.get("/compare/").content.decode()


def test_it_compares_specific_runs_by_uuid(client, agent):
    a = upload(agent, version="13.3", tps={1: [100]}, started_at="2026-11-01T10:00:00Z")
    b = upload(agent, version="13.3", tps={1: [150]}, started_at="2026-11-02T10:00:00Z")
    html = client.get(f"/compare/?runs={a.uuid},{b.uuid}").content.decode()
    names = [t["name"] for t in _figure(html, "tps-figure")["data"]]
    assert names == [f"13.3 ({str(a.uuid)[:8]})", f"13.3 ({str(b.uuid)[:8]})"]
    assert f'value="{a.uuid},{b.uuid}"' in html
