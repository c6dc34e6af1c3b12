"""Imported runs read as imports on every page that lists them: no agent is blamed for what an
import never carries, and no "None" where a figure is unknown."""

import re

import pytest
from django.test import Client

from benchhub.results.models import Run
from benchhub.testing.processes import ROOT

FIXTURES = ROOT / "runners" / "tests" / "fixtures" / "pgbench"
SELECT_ONLY = (FIXTURES / "pg15-select-only-P1-r-T3.txt").read_text()
TABLE = "clients 13.3 14beta1\n64 91000 95500\n128 88000 101000\n"


def text_of(html: str) -> str:
    html = re.sub(r"<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture
def signed_in(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


def test_it_shows_no_none_and_no_raw_keys_for_a_summary_without_its_length(signed_in):
    response = signed_in.post(
        "/import/summary/",
        {"host": "paper-box", "builtin": "select-only", "table": TABLE, "note": "a paper"},
    )
    assert response.status_code == 302, response.content
    run = Run.objects.get(build__version="13.3")
    assert run.duration_s is None and run.transactions_per_client is None
    for page in ("/", "/runs/", f"/runs/{run.uuid}/", "/hosts/", "/hosts/paper-box/"):
        text = text_of(signed_in.get(page).content.decode())
        found = re.search(r"\bNone\b", text)
        assert not found, (page, text[max(0, found.start() - 200) : found.end() + 50])
        assert "tx/client" not in text, page
    run_page = text_of(signed_in.get(f"/runs/{run.uuid}/").content.decode())
    assert "length not recorded" in run_page


def test_it_does_not_blame_an_agent_for_the_evidence_an_import_lacks(signed_in):
    response = signed_in.post(
        "/import/", {"version": "15.4", "host": "old-box", "pasted": SELECT_ONLY}
    )
    assert response.status_code == 302, response.content
    html = signed_in.get(response.url).content.decode()
    assert "No server evidence at this level (an import carries none)" in html
    assert "the agent sent none" not in html
