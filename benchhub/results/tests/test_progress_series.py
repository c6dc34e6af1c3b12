"""Progress samples stored as a row of arrays per result: what an upload sends comes back the
same through the API and the run page, and rows of the former shape (a row per second) are
converted in batches, resuming where an interrupted conversion stopped."""

import json

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from benchhub.results.models import ProgressSample, ProgressSeries, Result, Run
from benchhub.results.progress import progress_convert, progress_convert_batch
from benchhub.results.selectors import progress_points
from benchhub.testing.payloads import result, run_payload


def upload(agent, *, clients=(1, 2), repeats=2, samples=5) -> dict:
    payload = run_payload(clients=clients, repeats=repeats, host=agent.host_name)
    payload["results"] = [
        result(c, r, 1000.0 * c + r, samples=samples)
        for c in clients
        for r in range(1, repeats + 1)
    ]
    # Figures pgbench prints only sometimes (-R's lag, failures) arrive as null or numbers.
    first = payload["results"][0]["progress"]
    first[1].update(lag_ms=0.25, skipped=3, failed=1, tps=None)
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload


def api_progress(client, run_uuid) -> list[list[dict]]:
    body = client.get(f"/api/v1/runs/{run_uuid}/results/", {"progress": "1"}).json()
    assert body["next"] is None  # the test's runs fit one page
    return [row["progress"] for row in body["results"]]


def page_points(run: Run) -> dict:
    ids = list(run.results.order_by("clients", "repeat").values_list("pk", flat=True))
    return {i: vars(p) for i, p in progress_points(result_ids=ids).items()}


def to_old_shape(runs: list[Run]) -> None:
    """Put the runs' progress back into the former shape, a row per second, as stored before."""
    series = list(ProgressSeries.objects.filter(result__run__in=runs))
    ProgressSample.objects.bulk_create(
        ProgressSample(result_id=s.result_id, **sample) for s in series for sample in s.samples()
    )
    ProgressSeries.objects.filter(result__run__in=runs).delete()


def test_it_gives_back_the_uploaded_samples_through_the_api_and_the_page(agent, anon_client):
    payload = upload(agent)
    run = Run.objects.get(uuid=payload["run_uuid"])

    assert api_progress(anon_client, payload["run_uuid"]) == [
        r["progress"] for r in payload["results"]
    ]
    points = page_points(run)
    first = run.results.get(clients=1, repeat=1)
    sent = payload["results"][0]["progress"]
    assert points[first.pk] == {
        "t": [s["t"] for s in sent],
        "tps": [s["tps"] for s in sent],
        "latency_ms": [s["latency_ms"] for s in sent],
    }
    page = anon_client.get(f"/runs/{payload['run_uuid']}/")
    assert page.status_code == 200 and '"chart-progress-1"' in page.content.decode()
    # One row per result, not one per second.
    assert ProgressSeries.objects.filter(result__run=run).count() == 4


def test_it_stores_samples_sent_out_of_order_in_time_order(agent, anon_client):
    payload = run_payload(clients=(1,), repeats=1, host=agent.host_name)
    payload["results"] = [result(1, 1, 500.0, samples=4)]
    payload["results"][0]["progress"].reverse()
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    (progress,) = api_progress(anon_client, payload["run_uuid"])
    assert [s["t"] for s in progress] == [1.0, 2.0, 3.0, 4.0]


def test_it_converts_old_rows_to_the_same_api_and_page_data(agent, anon_client):
    payloads = [upload(agent) for _ in range(3)]
    runs = [Run.objects.get(uuid=p["run_uuid"]) for p in payloads]
    before = [(api_progress(anon_client, r.uuid), page_points(r)) for r in runs]
    to_old_shape(runs)
    assert ProgressSeries.objects.filter(result__run__in=runs).count() == 0
    assert ProgressSample.objects.count() == 12 * 5

    assert progress_convert(batch=5) == 12

    assert [(api_progress(anon_client, r.uuid), page_points(r)) for r in runs] == before
    assert ProgressSample.objects.count() == 0


def test_it_converts_in_batches_and_resumes_after_an_interruption(agent, anon_client):
    runs = [Run.objects.get(uuid=upload(agent)["run_uuid"]) for _ in range(3)]
    before = [api_progress(anon_client, r.uuid) for r in runs]
    to_old_shape(runs)
    ids = sorted(Result.objects.filter(run__in=runs).values_list("pk", flat=True))

    assert progress_convert(batch=5, max_batches=1) == 5  # a first batch commits
    converted = set(ProgressSeries.objects.values_list("result_id", flat=True))
    assert converted == set(ids[:5])
    # The next batch is interrupted: nothing of it stays, neither converted nor deleted.
    with pytest.raises(RuntimeError), transaction.atomic():
        assert progress_convert_batch(limit=5) == 5
        raise RuntimeError("the process was killed")
    assert set(ProgressSeries.objects.values_list("result_id", flat=True)) == converted
    assert set(ProgressSample.objects.values_list("result_id", flat=True)) == set(ids[5:])

    call_command("progress_convert", batch=4)  # resumes with what is left

    assert set(ProgressSeries.objects.values_list("result_id", flat=True)) == set(ids)
    assert ProgressSample.objects.count() == 0
    assert [api_progress(anon_client, r.uuid) for r in runs] == before
    assert progress_convert() == 0  # idempotent: nothing left to do


def test_a_result_already_converted_keeps_its_series(agent, anon_client):
    run = Run.objects.get(uuid=upload(agent)["run_uuid"])
    before = api_progress(anon_client, run.uuid)
    first = run.results.order_by("clients", "repeat")[0]
    # Rows of the old shape left behind for a result that has its series already.
    ProgressSample.objects.create(result=first, t=99.0, tps=1.0)

    assert progress_convert() == 1

    assert api_progress(anon_client, run.uuid) == before
    assert ProgressSample.objects.count() == 0


def test_the_series_table_is_partitioned_by_month(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relkind FROM pg_class WHERE relname IN "
            "('results_progressseries', 'results_resultevidence', 'results_resultoutput',"
            " 'results_streamoutput', 'results_runimporttext', 'results_resulttelemetry')"
        )
        assert [kind for (kind,) in cursor.fetchall()] == ["p"] * 6
