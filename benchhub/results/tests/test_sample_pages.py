"""The results API hands out a run's per-second samples a bounded page at a time."""

import json

from benchhub.results.sample_pages import SAMPLE_PAGE_MAX
from benchhub.testing.payloads import result, run_payload


def uploaded(agent) -> dict:
    """Three results: 7 progress and 3 telemetry samples, none, 5 progress (15 in all)."""
    payload = run_payload(clients=(1, 2, 4), repeats=1)
    telemetry = [{"t": float(t), "cpu_user_pct": 10.0 + t} for t in range(1, 4)]
    payload["results"] = [
        result(1, 1, 100.0, samples=7, telemetry=telemetry),
        result(2, 1, 200.0, samples=0),
        result(4, 1, 400.0, samples=5),
    ]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload


def samples_of(rows: list[dict]) -> list[tuple]:
    return [
        (row["clients"], kind, sample["t"])
        for row in rows
        for kind in ("progress", "telemetry")
        for sample in row[kind]
    ]


def test_it_walks_every_sample_once_by_next_links_with_the_total(agent, client):
    payload = uploaded(agent)
    url = f"/api/v1/runs/{payload['run_uuid']}/results/?progress=true&limit=4"
    pages = []
    while url:
        body = client.get(url).json()
        pages.append(body)
        url = body["next"]

    assert [page["count"] for page in pages] == [15] * 4
    assert [len(samples_of(page["results"])) for page in pages] == [4, 4, 4, 3]
    walked = [s for page in pages for s in samples_of(page["results"])]
    expected = [(1, "progress", float(t)) for t in range(1, 8)]
    expected += [(1, "telemetry", float(t)) for t in range(1, 4)]
    expected += [(4, "progress", float(t)) for t in range(1, 6)]
    assert walked == expected
    # The result without samples rides on the first page; each row keeps its result's fields.
    assert [row["clients"] for row in pages[0]["results"]] == [1, 2]
    assert [row["clients"] for row in pages[2]["results"]] == [1, 4]
    assert pages[2]["results"][1]["tps"] == 400.0 and pages[2]["results"][1]["raw_output"]
    assert pages[0]["previous"] is None and "offset=4" in pages[2]["previous"]
    assert pages[-1]["next"] is None


def test_it_bounds_a_page_and_names_the_parameter_it_refuses(agent, client):
    payload = uploaded(agent)
    url = f"/api/v1/runs/{payload['run_uuid']}/results/"

    default = client.get(url, {"progress": "true"}).json()
    too_many = client.get(url, {"progress": "true", "limit": SAMPLE_PAGE_MAX + 1})
    negative = client.get(url, {"progress": "true", "offset": -1})

    assert default["count"] == 15 and default["next"] is None
    assert too_many.status_code == 400 and "limit" in too_many.json()["fields"]
    assert str(SAMPLE_PAGE_MAX) in json.dumps(too_many.json())
    assert negative.status_code == 400 and "offset" in negative.json()["fields"]
    # Without progress the body is the list of results, as before.
    assert [row["clients"] for row in client.get(url).json()] == [1, 2, 4]
