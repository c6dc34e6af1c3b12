"""A run page and a run's API answer are as large as what they show, not as what was imported:
the largest import the server accepts (nested quote lines up to the request bound) shows its
head on both, and the whole text is a download of its own."""

import json

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from benchhub.results.excerpts import (
    IMPORT_SHOWN_CHARS,
    OUTPUT_SHOWN_CHARS,
    OUTPUTS_SHOWN_CHARS,
    excerpt,
    output_excerpts,
)
from benchhub.results.models import Result, Run
from benchhub.results.texts_api import TEXT_PAGE_MAX
from benchhub.testing.payloads import run_payload
from benchhub.testing.quoted import OUTPUT as QUOTED_FROM
from benchhub.testing.quoted import OUTPUT_NAME, largest_import_texts, nested_quotes

OUTPUT = (QUOTED_FROM / OUTPUT_NAME).read_text()
PAGE_BOUND = 1_000_000


@pytest.fixture
def largest_import(bob) -> tuple[Run, str]:
    api = APIClient()
    api.force_authenticate(bob)
    texts = largest_import_texts()
    body = {"host": "old-box", "version": "15.4", "outputs": [{"text": t} for t in texts]}
    encoded = json.dumps(body)
    assert settings.MAX_UPLOAD_BYTES - 600_000 < len(encoded) < settings.MAX_UPLOAD_BYTES
    response = api.post("/api/v1/imports/outputs/", encoded, content_type="application/json")
    assert response.status_code == 201, response.content[:500]
    return Run.objects.get(), Run.objects.get().import_text


def test_it_shows_the_head_of_the_largest_import_on_a_bounded_run_page(client, largest_import):
    run, text = largest_import
    page = client.get(f"/runs/{run.uuid}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert len(page.content) < PAGE_BOUND
    # The head of the text and of the output the import made, each with its download.
    assert "&gt; " * 100 in html
    assert f'href="/api/v1/runs/{run.uuid}/import-text/"' in html
    for result in Result.objects.filter(run=run):
        assert f'href="/api/v1/runs/{run.uuid}/results/{result.pk}/output/"' in html
    assert f"of {len(text)} characters" in html


def test_it_answers_the_run_api_with_the_head_and_a_link_to_the_whole(client, largest_import):
    run, text = largest_import
    response = client.get(f"/api/v1/runs/{run.uuid}/")
    assert response.status_code == 200 and len(response.content) < PAGE_BOUND
    body = response.json()
    assert text.startswith(body["import_text"])
    assert 0 < len(body["import_text"]) <= IMPORT_SHOWN_CHARS
    assert body["import_text_chars"] == len(text)
    whole = client.get(body["import_text_url"])
    assert whole.status_code == 200 and whole["Content-Type"].startswith("text/plain")
    assert whole.content.decode() == text
    result = Result.objects.filter(run=run).first()
    output = client.get(f"/api/v1/runs/{run.uuid}/results/{result.pk}/output/")
    assert output.content.decode() == result.raw_output


def test_it_shares_one_pages_output_budget_among_many_outputs(client, bob):
    api = APIClient()
    api.force_authenticate(bob)
    long = nested_quotes(chars=180_000)
    outputs = [{"text": long} for _ in range(20)]
    body = {"host": "old-box", "version": "15.4", "outputs": outputs}
    assert api.post("/api/v1/imports/outputs/", body, format="json").status_code == 201
    run = Run.objects.get()
    html = client.get(f"/runs/{run.uuid}/").content.decode()
    # Twenty outputs of about 180,000 characters: the page shows OUTPUTS_SHOWN_CHARS of them in
    # all, and says of the rest that they are not shown, each with its download.
    shown = output_excerpts([excerpt(long, limit=OUTPUT_SHOWN_CHARS)] * 20)
    assert sum(len(e.head) for e in shown) <= OUTPUTS_SHOWN_CHARS
    assert html.count("characters, not shown here.") == sum(1 for e in shown if not e.head) > 10
    assert html.count("Download the whole output") == 20
    assert len(html) < PAGE_BOUND


def test_it_keeps_a_short_import_whole_on_the_page_without_a_download(client, bob):
    api = APIClient()
    api.force_authenticate(bob)
    body = {"host": "old-box", "version": "15.4", "outputs": [{"text": OUTPUT}]}
    assert api.post("/api/v1/imports/outputs/", body, format="json").status_code == 201
    run = Run.objects.get()
    html = client.get(f"/runs/{run.uuid}/").content.decode()
    assert "Download the whole" not in html
    assert client.get(f"/api/v1/runs/{run.uuid}/").json()["import_text"] == OUTPUT


def test_it_answers_404_for_the_text_of_a_run_an_agent_sent(client, agent):
    payload = run_payload()
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    response = client.get(f"/api/v1/runs/{payload['run_uuid']}/import-text/")
    assert response.status_code == 404 and response.json()["error"] == "not_found"


def test_it_sends_the_heads_of_the_largest_imports_outputs_with_its_samples(client, largest_import):
    run, _ = largest_import
    response = client.get(f"/api/v1/runs/{run.uuid}/results/", {"progress": "true"})
    assert response.status_code == 200 and len(response.content) < PAGE_BOUND
    rows = response.json()["results"]
    outputs = {r.pk: r.raw_output for r in Result.objects.filter(run=run)}
    assert len(rows) == len(outputs) > 1
    assert sum(len(row["raw_output"]) for row in rows) <= OUTPUTS_SHOWN_CHARS
    for row in rows:
        whole = client.get(row["raw_output_url"]).content.decode()
        assert whole in outputs.values() and len(whole) > OUTPUT_SHOWN_CHARS
        assert row["raw_output_chars"] == len(whole)
        assert 0 < len(row["raw_output"]) <= OUTPUT_SHOWN_CHARS
        assert whole.startswith(row["raw_output"])


def test_it_pages_a_whole_text_by_next_links_each_page_bounded(client, largest_import):
    run, text = largest_import
    url = f"/api/v1/runs/{run.uuid}/import-text/?limit=700000"
    pages = []
    while url:
        response = client.get(url)
        assert response.status_code == 200 and len(response.content) <= 4 * 700_000
        assert response["X-Total-Chars"] == str(len(text))
        pages.append(response.content.decode())
        url = response.get("Link", "").removeprefix("<").partition(">")[0]
    assert len(pages) == -(-len(text) // 700_000) > 1
    assert "".join(pages) == text
    result = Result.objects.filter(run=run).first()
    output = f"/api/v1/runs/{run.uuid}/results/{result.pk}/output/"
    middle = client.get(output, {"offset": 1000, "limit": 50})
    assert middle.content.decode() == result.raw_output[1000:1050]
    assert "Link" in middle and middle["X-Total-Chars"] == str(len(result.raw_output))


def test_it_names_a_bad_text_page_parameter(client, largest_import):
    run, _ = largest_import
    url = f"/api/v1/runs/{run.uuid}/import-text/"
    too_long = client.get(url, {"limit": TEXT_PAGE_MAX + 1})
    negative = client.get(url, {"offset": -1})
    assert too_long.status_code == 400 and "limit" in too_long.json()["fields"]
    assert negative.status_code == 400 and "offset" in negative.json()["fields"]
    assert client.get(f"/api/v1/runs/{run.uuid}/results/0/output/?limit=5").status_code == 404
