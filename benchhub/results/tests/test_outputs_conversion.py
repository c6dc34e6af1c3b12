"""Raw outputs stored in the results' and streams' own rows (the former shape) are copied into
their monthly tables in batches, resuming after an interruption, with the run's month."""

import json

from django.db import connection

from benchhub.results.models import ResultOutput, Run, StreamOutput
from benchhub.results.outputs import _SOURCES, outputs_convert, outputs_convert_batch
from benchhub.testing.payloads import run_payload, stream


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
    table, key, source, created = _SOURCES[0]
    # An interrupted conversion: one batch of two results committed, then it stopped.
    assert outputs_convert_batch(table=table, key=key, source=source, created=created,
                                 after=ids[0] - 1, limit=2) == 2  # fmt: skip

    assert outputs_convert(batch=1) == 1 + 1  # the result left, and the stream

    outputs = {o.result_id: o for o in ResultOutput.objects.all()}
    assert {i: o.text for i, o in outputs.items()} == {i: f"pgbench output {i}" for i in ids[:3]}
    assert {o.created_at for o in outputs.values()} == {run.created_at}
    [output] = StreamOutput.objects.all()
    assert output.text == f"stream output {output.stream_id}"
    assert output.created_at == run.created_at
    assert outputs_convert() == 0  # nothing is copied twice
