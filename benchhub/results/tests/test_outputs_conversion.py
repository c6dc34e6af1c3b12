"""Raw outputs stored in the results' and streams' own rows, imported texts stored in the runs'
own rows and OS telemetry stored in the results' own rows (the former shapes) are copied into
their monthly tables in batches, resuming after an interruption, with the run's month."""

import json

from django.db import connection

from benchhub.results.imports import run_import_outputs
from benchhub.results.models import ResultOutput, ResultTelemetry, Run, RunImportText, StreamOutput
from benchhub.results.outputs import (
    _SOURCES,
    IMPORT_TEXT_SOURCES,
    TELEMETRY_SOURCES,
    import_texts_convert,
    outputs_convert,
    outputs_convert_batch,
    telemetry_convert,
)
from benchhub.testing.payloads import SELECT_ONLY_OUTPUT, run_payload, stream, telemetry


def former_shape() -> Run:
    """A run whose outputs sit in the old columns (put back for the test: the transaction the
    test runs in takes them away again), and none in the new tables."""
    with connection.cursor() as cursor:
        # The upload's deferred foreign-key checks are still pending: run them before the DDL.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in ("results_result", "results_streamresult"):
            cursor.execute(f"ALTER TABLE {table} ADD COLUMN raw_output text NOT NULL DEFAULT ''")
        cursor.execute("DELETE FROM results_resultoutput")
        cursor.execute("DELETE FROM results_streamoutput")
        cursor.execute("UPDATE results_result SET raw_output = 'pgbench output ' || id")
        cursor.execute("UPDATE results_streamresult SET raw_output = 'stream output ' || id")
        # A result whose pgbench printed nothing gets no row.
        cursor.execute("UPDATE results_result SET raw_output = '' WHERE clients = 2 AND repeat = 2")
    return Run.objects.get()


def test_it_copies_the_outputs_in_batches_and_resumes(agent):
    payload = run_payload(clients=(1, 2), repeats=2, host=agent.host_name)
    payload["results"][0]["streams"] = [stream("reads", tps=10.0, clients=1)]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = former_shape()
    ids = sorted(run.results.values_list("id", flat=True))
    # An interrupted conversion: one batch of two results committed, then it stopped.
    assert outputs_convert_batch(source=_SOURCES[0], after=ids[0] - 1, limit=2) == 2

    assert outputs_convert(batch=1) == 1 + 1  # the result left, and the stream

    outputs = {o.result_id: o for o in ResultOutput.objects.all()}
    assert {i: o.text for i, o in outputs.items()} == {i: f"pgbench output {i}" for i in ids[:3]}
    assert {o.created_at for o in outputs.values()} == {run.created_at}
    [output] = StreamOutput.objects.all()
    assert output.text == f"stream output {output.stream_id}"
    assert output.created_at == run.created_at
    assert outputs_convert() == 0  # nothing is copied twice


def test_it_copies_the_imported_texts_in_batches_and_resumes(bob):
    runs = [
        run_import_outputs(
            texts=[("c4.txt", SELECT_ONLY_OUTPUT.format(clients=4, transactions=8201, tps=tps,
                                                        latency=0.975))],
            version="16.1", host="old-box", config_text="", lscpu="", user=bob,
        )
        for tps in (4100.5, 4200.5, 4300.5)
    ]  # fmt: skip
    with connection.cursor() as cursor:  # the former shape, as in former_shape()
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE results_run ADD COLUMN import_text text NOT NULL DEFAULT ''")
        cursor.execute("DELETE FROM results_runimporttext")
        cursor.execute("UPDATE results_run SET import_text = 'imported text ' || id")
        # A run that was not imported gets no row.
        cursor.execute("UPDATE results_run SET import_text = '' WHERE id = %s", [runs[1].pk])
    # An interrupted conversion: the batch of the first run committed, then it stopped.
    assert outputs_convert_batch(source=IMPORT_TEXT_SOURCES[0], after=runs[0].pk - 1, limit=1) == 1

    assert import_texts_convert(batch=1) == 1  # the last run; the second has none

    texts = {t.run_id: t for t in RunImportText.objects.all()}
    assert {i: t.text for i, t in texts.items()} == {
        r.pk: f"imported text {r.pk}" for r in (runs[0], runs[2])
    }
    assert [texts[r.pk].created_at for r in (runs[0], runs[2])] == [runs[0].created_at,
                                                                   runs[2].created_at]  # fmt: skip
    assert import_texts_convert() == 0  # nothing is copied twice


def test_it_copies_the_telemetry_in_batches_and_resumes(agent, anon_client):
    payload = run_payload(clients=(1, 2), repeats=2, host=agent.host_name)
    for n, row in enumerate(payload["results"]):
        row["telemetry"] = telemetry(iowait_pct=[float(n), n + 0.5, n + 0.25])
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    url = f"/api/v1/runs/{payload['run_uuid']}/results/?progress=1"
    uploaded = [row["telemetry"] for row in anon_client.get(url).json()["results"]]
    sent = [[s["cpu_iowait_pct"] for s in row["telemetry"]] for row in payload["results"]]
    assert [[s["cpu_iowait_pct"] for s in samples] for samples in uploaded] == sent
    with connection.cursor() as cursor:  # the former shape, as in former_shape()
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(
            "ALTER TABLE results_result ADD COLUMN telemetry jsonb NOT NULL DEFAULT '[]'::jsonb"
        )
        cursor.execute(
            "UPDATE results_result r SET telemetry = m.samples FROM results_resulttelemetry m"
            " WHERE m.result_id = r.id"
        )
        cursor.execute("DELETE FROM results_resulttelemetry")
        # A result whose agent sent none held the column's default, and gets no row.
        cursor.execute(
            "UPDATE results_result SET telemetry = '[]' WHERE clients = 2 AND repeat = 2"
        )
    run = Run.objects.get()
    ids = sorted(run.results.values_list("id", flat=True))
    # An interrupted conversion: one batch of two results committed, then it stopped.
    assert outputs_convert_batch(source=TELEMETRY_SOURCES[0], after=ids[0] - 1, limit=2) == 2

    assert telemetry_convert(batch=1) == 1  # the result left with samples

    rows = {m.result_id: m for m in ResultTelemetry.objects.all()}
    assert sorted(rows) == ids[:3]
    assert {m.created_at for m in rows.values()} == {run.created_at}
    assert telemetry_convert() == 0  # nothing is copied twice
    read = [row["telemetry"] for row in anon_client.get(url).json()["results"]]
    assert read == [*uploaded[:3], []]  # in clients, repeat order: the last is (2, 2)
