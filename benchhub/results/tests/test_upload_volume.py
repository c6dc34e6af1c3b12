"""The upload's shortcuts for volume give what the long way gives: a thread's reused field tree
the same rows and the same errors, field by field, as a fresh serializer; the results' COPY the
same stored values as each field's own preparation; and a refused upload stores nothing."""

import copy
import json
import threading
import uuid
from typing import Any

import pytest
from django.db import IntegrityError

from benchhub.api.errors import flatten_errors
from benchhub.api.serializers import with_built_fields
from benchhub.results.copying import instances_copy
from benchhub.results.models import LevelAggregate, ProgressSeries, Result, Run
from benchhub.results.serializers import RunOutSerializer, RunUploadSerializer
from benchhub.results.services import payload_digest, run_submit
from benchhub.results.tests.test_upload_atomicity import stored_counts
from benchhub.testing.payloads import run_payload


def _spoiled(payload: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    spoiled = copy.deepcopy(payload)
    target: Any = spoiled
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return spoiled


GOOD = run_payload(version="16.1", clients=(1, 2, 4), repeats=2)
BAD = [
    _spoiled(GOOD, ("results", 3, "tps"), -1.0),
    _spoiled(GOOD, ("results", 0, "clients"), True),
    _spoiled(GOOD, ("results", 5, "tpss"), 1.0),
    _spoiled(GOOD, ("host", "name"), ""),
    _spoiled(GOOD, ("configuration", "settings"), {"shared_buffers": 1}),
    _spoiled(GOOD, ("workload",), {"name": "tpcb-like", "query_mode": "nope"}),
    _spoiled(GOOD, ("clients",), [1, 1]),
    _spoiled(GOOD, ("results",), []),
    # Past a float's range, kept exact by the parser: a field error, not a server error.
    _spoiled(GOOD, ("results", 1, "tps"), 10**400),
]


def _outcome(serializer: RunUploadSerializer) -> str:
    if serializer.is_valid():
        return json.dumps(["valid", serializer.validated_data], sort_keys=True, default=str)
    return json.dumps(["refused", serializer.errors], sort_keys=True, default=str)


def test_it_gives_a_reused_tree_the_rows_and_errors_of_a_fresh_serializer():
    # Good and bad in turn, so that each bad body meets a tree that validated a good one and
    # each good body one that refused a bad one.
    for data in [GOOD, *(body for bad in BAD for body in (bad, GOOD))]:
        fresh = _outcome(RunUploadSerializer(data=data))
        assert _outcome(with_built_fields(RunUploadSerializer, data=data)) == fresh


def test_it_builds_a_threads_tree_once_and_each_thread_its_own():
    first = with_built_fields(RunUploadSerializer, data=GOOD)
    second = with_built_fields(RunUploadSerializer, data=BAD[0])
    assert second.fields is first.fields
    assert second.initial_data is BAD[0]
    elsewhere: list[Any] = []
    thread = threading.Thread(
        target=lambda: elsewhere.append(with_built_fields(RunUploadSerializer, data=GOOD).fields)
    )
    thread.start()
    thread.join()
    assert elsewhere[0] is not first.fields


def test_it_answers_through_a_reused_tree_what_a_fresh_serializer_answers(db):
    other = run_payload(version="17.0", clients=(1, 2), repeats=2)
    runs = [
        run_submit(data=_validated(payload), digest=digest).run
        for payload, digest in ((GOOD, "a" * 64), (other, "b" * 64))
    ]
    for run in [*runs, runs[0]]:
        fresh = RunOutSerializer(run).data
        assert with_built_fields(RunOutSerializer, instance=run).data == fresh


def _validated(payload: dict[str, Any]) -> dict[str, Any]:
    upload = RunUploadSerializer(data=payload)
    upload.is_valid(raise_exception=True)
    return upload.validated_data


@pytest.mark.parametrize("bad", range(len(BAD)))
def test_it_refuses_a_bad_upload_after_a_good_one_naming_the_fields_and_storing_nothing(agent, bad):
    good = dict(GOOD, run_uuid=str(uuid.uuid4()))
    response = agent.client.post("/api/v1/runs/", good, content_type="application/json")
    assert response.status_code == 201, response.content
    stored = (Run.objects.count(), Result.objects.count(), ProgressSeries.objects.count())
    body = dict(BAD[bad], run_uuid=str(uuid.uuid4()))
    response = agent.client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    fresh = RunUploadSerializer(data=body)
    assert not fresh.is_valid()
    assert response.json()["fields"] == flatten_errors(fresh.errors)
    assert (Run.objects.count(), Result.objects.count(), ProgressSeries.objects.count()) == stored


STORED = ["clients", "repeat", "threads", "tps", "transactions", "latency_avg_ms", "aborted"]
STORED += ["errors", "statements", "comparability_key", "steady_tps", "unsteady"]


def test_it_copies_values_of_other_types_as_each_field_prepares_them(agent):
    payload = dict(GOOD, run_uuid=str(uuid.uuid4()))
    response = agent.client.post("/api/v1/runs/", payload, content_type="application/json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    plain = Result(run=run, clients=64, repeat=1, threads=4, tps=10.5, transactions=7,
                   latency_avg_ms=None, aborted=False, errors=["x"], statements=[{"a": 1}],
                   comparability_key="k", steady_tps=None, unsteady="")  # fmt: skip
    # A float where an integer goes, an int where a float goes, 0/1 for a boolean, a number
    # where text goes: each as the field prepares it (int(), float(), bool(), str()).
    odd: Any = Result(run=run, clients=128.0, repeat=1, threads=4, tps=11, transactions=7.0,
                      latency_avg_ms=2, aborted=False, errors=[], statements={"b": [2]},
                      comparability_key=5, steady_tps=3, unsteady="")  # fmt: skip
    odd.aborted = 0
    instances_copy([plain, odd])
    assert not plain._state.adding and plain.pk is not None
    stored = Result.objects.filter(pk__in=[plain.pk, odd.pk]).values()
    rows: dict[int, dict[str, Any]] = {r["id"]: dict(r) for r in stored}
    assert [rows[plain.pk][k] for k in STORED] == [
        64, 1, 4, 10.5, 7, None, False, ["x"], [{"a": 1}], "k", None, ""
    ]  # fmt: skip
    assert [rows[odd.pk][k] for k in STORED] == [
        128, 1, 4, 11.0, 7, 2.0, False, [], {"b": [2]}, "5", 3.0, ""
    ]  # fmt: skip
    assert type(rows[odd.pk]["tps"]) is float


def test_it_stores_nothing_when_the_database_refuses_a_result_in_the_copy(db):
    """A value written as it is (a plain int) that the column's check refuses: the COPY fails
    after the run's row was written, and the whole upload is rolled back."""
    payload = run_payload(version="16.1", host="fresh-host", repeats=3)
    upload = RunUploadSerializer(data=payload)
    assert upload.is_valid(), upload.errors
    data = upload.validated_data
    data["results"][-2]["transactions"] = -5  # a positive column
    before = stored_counts()
    with pytest.raises(IntegrityError):
        run_submit(data=data, digest=payload_digest(payload))
    assert stored_counts() == before
    assert LevelAggregate.objects.count() == 0
