"""The ways in: the host list, the run list (filters, pages), the navigation, and hosts whose
runs were imported shown as imported, never as offline agents."""

import json
import re

import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import upload
from benchhub.dashboard import views_hosts, views_runs
from benchhub.hosts.models import Host
from benchhub.testing.browser import screenshot
from benchhub.testing.payloads import run_payload


def _import(person, *, host: str, version: str = "13.3") -> None:
    """A run a person uploads (an import): its host has no agent."""
    api = APIClient()
    api.force_authenticate(person)
    payload = run_payload(version=version, host=host, source="import")
    response = api.post("/api/v1/runs/", json.dumps(payload), content_type="application/json")
    assert response.status_code == 201, response.content


def _row(html: str, host: str) -> str:
    match = re.search(rf'<tr data-host="{re.escape(host)}">(.*?)</tr>', html, re.S)
    assert match, host
    return match.group(1)


def _hosts(html: str) -> list[str]:
    return re.findall(r'<tr data-host="([^"]+)">', html)


def _run_rows(html: str) -> list[str]:
    """The host column of each row of the runs table."""
    return re.findall(r'<td class="name"><a href="/hosts/[^"]+/">([^<]+)</a></td>', html)


def test_it_lists_hosts_with_agent_or_imported_last_seen_runs_and_tags(client, agent, bob):
    upload(agent, version="13.3", tps={1: [100.0]}, started_at="2026-11-19T10:00:00Z")
    upload(agent, version="15.4", tps={1: [110.0]})  # started 2026-11-20 10:00
    Host.objects.filter(name="bench-01").update(tags=["fast-disk"])
    _import(bob, host="old-box")

    response = client.get("/hosts/")

    assert response.status_code == 200
    html = response.content.decode()
    agent_row, imported_row = _row(html, "bench-01"), _row(html, "old-box")
    assert "presence agent" in agent_row and "fast-disk" in agent_row
    assert '<a href="/runs/?host=bench-01">2</a>' in agent_row
    assert "2026-11-20 10:00" in agent_row  # the last run
    assert "presence imported" in imported_row and "offline" not in imported_row
    assert '<a href="/runs/?host=old-box">1</a>' in imported_row
    for link in ('href="/history/">History', 'href="/runs/">Runs', 'href="/hosts/">Hosts'):
        assert link in html


def test_it_reads_the_host_list_in_one_query(client, agent, bob, django_assert_num_queries):
    for name in ("old-box", "paper", "laptop"):
        _import(bob, host=name)
    upload(agent, version="13.3", tps={1: [100.0]})
    # One for the page's hosts, one for how many there are.
    with django_assert_num_queries(2):
        client.get("/hosts/")


def test_it_filters_and_pages_the_host_list(client, agent, bob, monkeypatch):
    monkeypatch.setattr(views_hosts, "HOSTS_PAGE", 2)
    upload(agent, version="13.3", tps={1: [100.0]})  # bench-01, measured by an agent
    for name in ("old-box", "old-laptop", "paper"):
        _import(bob, host=name)

    imported = client.get("/hosts/?measured_by=imported").content.decode()
    assert _hosts(imported) == ["old-box", "old-laptop"] and "page 1 of 2" in imported
    assert 'rel="next" href="?measured_by=imported&amp;page=2"' in imported
    second = client.get("/hosts/?measured_by=imported&page=2").content.decode()
    assert _hosts(second) == ["paper"]
    assert _hosts(client.get("/hosts/?measured_by=agent").content.decode()) == ["bench-01"]
    assert _hosts(client.get("/hosts/?name=OLD").content.decode()) == ["old-box", "old-laptop"]
    none = client.get("/hosts/?name=nowhere")
    assert none.status_code == 200 and 'id="no-matching-hosts"' in none.content.decode()
    # An unknown choice is no filter.
    assert len(_hosts(client.get("/hosts/?measured_by=x&page=x").content.decode())) == 2


def test_it_shows_imported_hosts_as_imported_on_the_home_page(client, agent, bob):
    agent.client.post("/api/v1/jobs/claim/")  # the agent is seen
    _import(bob, host="old-box")
    html = client.get("/").content.decode()
    assert "presence online" in _row(html, "bench-01")
    imported = _row(html, "old-box")
    assert "presence imported" in imported and "offline" not in imported


def test_it_lists_runs_newest_first_and_filters_them(client, agent, other_agent):
    upload(agent, version="13.3", tps={1: [100.0]})
    upload(agent, version="15.4", tps={1: [110.0]})
    upload(other_agent, version="15.4", tps={1: [120.0]}, status="aborted")

    html = client.get("/runs/").content.decode()
    assert _run_rows(html) == ["bench-02", "bench-01", "bench-01"]
    assert "3 runs; newest first" in html

    assert _run_rows(client.get("/runs/?host=bench-01").content.decode()) == ["bench-01"] * 2
    by_version = client.get("/runs/?version=15.4").content.decode()
    assert _run_rows(by_version) == ["bench-02", "bench-01"]
    assert "2 runs match" in by_version
    assert _run_rows(client.get("/runs/?status=aborted").content.decode()) == ["bench-02"]
    assert _run_rows(client.get("/runs/?workload=select-only&host=bench-02").content.decode()) == [
        "bench-02"
    ]
    none = client.get("/runs/?workload=tpcb-like").content.decode()
    assert _run_rows(none) == [] and "No run matches these filters." in none


def test_it_pages_the_run_list_keeping_the_filters(client, agent, other_agent, monkeypatch):
    monkeypatch.setattr(views_runs, "RUNS_PAGE", 2)
    for tps in (100.0, 101.0, 102.0):
        upload(agent, version="13.3", tps={1: [tps]})
    upload(other_agent, version="13.3", tps={1: [99.0]})

    first = client.get("/runs/?host=bench-01").content.decode()
    assert len(_run_rows(first)) == 2 and "page 1 of 2" in first
    assert 'rel="next" href="?host=bench-01&amp;page=2"' in first
    second = client.get("/runs/?host=bench-01&page=2").content.decode()
    assert _run_rows(second) == ["bench-01"]
    assert 'rel="prev" href="?host=bench-01&amp;page=1"' in second
    assert _run_rows(client.get("/runs/?host=bench-01&page=9").content.decode()) == ["bench-01"]


def test_it_refuses_an_unknown_status_naming_it(client, db):
    response = client.get("/runs/?status=great")
    assert response.status_code == 400
    assert "<strong>status</strong>: status must be one of completed" in response.content.decode()


def test_it_reads_a_page_of_runs_in_a_bounded_number_of_queries(
    client, agent, django_assert_max_num_queries
):
    for tps in range(5):
        upload(agent, version="13.3", tps={1: [100.0 + tps]})
    # the dimensions for the filters, the count, the page with its relations
    with django_assert_max_num_queries(3):
        client.get("/runs/?host=bench-01")


@pytest.mark.django_db(transaction=True)
def test_it_filters_runs_and_sees_an_imported_host_live_in_chromium(
    live_server, page, agent, other_agent, bob
):
    upload(agent, version="13.3", tps={1: [100.0]})
    upload(other_agent, version="15.4", tps={1: [120.0]})
    _import(bob, host="old-box")
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(live_server.url + "/")
    page.wait_for_selector("#status-live:has-text('live')")  # home.js redrew the hosts
    assert page.inner_text("#hosts tr[data-host='old-box'] .presence") == "imported"
    assert page.inner_text("#hosts tr[data-host='bench-02'] .presence") == "online"

    page.click("header nav a[href='/runs/']")
    page.select_option("select[name=host]", "bench-02")
    page.click("form.run-filters button[type=submit]")
    page.wait_for_url("**/runs/?host=bench-02*")
    assert page.locator("table.runs tbody tr").count() == 1
    assert "bench-02" in page.inner_text("table.runs tbody")

    page.click("header nav a[href='/hosts/']")
    assert page.locator("table.hosts-list tbody tr").count() == 3
    assert page.inner_text("tr[data-host='old-box'] .presence") == "imported"
    screenshot(page, "hosts-list")
    assert errors == []
