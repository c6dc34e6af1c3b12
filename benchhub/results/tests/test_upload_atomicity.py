"""A malformed or failing upload writes nothing: not the run, not a result, not a host, build,
configuration or workload it would have created, whether the serializer refuses it or the
database does halfway through the write (a late result, a stream, the COPY of progress)."""

import json

import pytest
from django.db import DatabaseError

from benchhub.builds.models import Build
from benchhub.configs.models import ServerConfig
from benchhub.hosts.models import Host, HostFacts
from benchhub.results.models import ProgressSeries, Result, Run, StreamResult
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import payload_digest, run_submit
from benchhub.testing.payloads import run_payload, stream
from benchhub.workloads.models import Workload

MODELS = (Run, Result, ProgressSeries, StreamResult, Host, HostFacts, Build, ServerConfig, Workload)


def stored_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


def post(client, payload):
    return client.post("/api/v1/runs/", data=json.dumps(payload), content_type="application/json")


def with_streams(payload: dict) -> dict:
    for result in payload["results"]:
        result["streams"] = [
            stream("reads", tps=result["tps"], clients=result["clients"]),
            stream("writes", tps=result["tps"] / 2, clients=result["clients"], role="background"),
        ]
    return payload


def malformed_stream(payload: dict) -> dict:
    payload["results"][-1]["streams"][1]["tps"] = "lots"
    return payload


def malformed_progress(payload: dict) -> dict:
    payload["results"][-1]["progress"][-1]["latency_ms"] = {"ms": 1}
    return payload


def duplicate_level(payload: dict) -> dict:
    payload["results"].append(dict(payload["results"][-1]))
    return payload


def duplicate_stream(payload: dict) -> dict:
    streams = payload["results"][-1]["streams"]
    streams[1]["name"] = streams[0]["name"]
    return payload


def duplicate_second(payload: dict) -> dict:
    progress = payload["results"][-1]["progress"]
    progress[-1]["t"] = progress[0]["t"]
    return payload


@pytest.mark.parametrize(
    "spoil",
    [malformed_stream, malformed_progress, duplicate_level, duplicate_stream, duplicate_second],
)
def test_it_refuses_a_malformed_upload_with_a_message_and_writes_nothing(agent, spoil):
    first = post(agent.client, with_streams(run_payload(version="13.5")))
    assert first.status_code == 201, first.content  # the shared rows exist already
    before = stored_counts()
    response = post(agent.client, spoil(with_streams(run_payload(version="16.1", repeats=3))))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid" and body["detail"] and body["fields"], body
    assert stored_counts() == before


def validated(payload: dict) -> dict:
    upload = RunUploadSerializer(data=payload)
    upload.is_valid(raise_exception=True)
    return upload.validated_data


def late_stream_violation(data: dict) -> None:
    data["results"][-1]["streams"][-1]["clients"] = -1  # a positive integer column


def _spoiled_sample(data: dict, result: int, sample: int, **values: object) -> None:
    # Validated samples carry the columns their check read (api.fields.Records), and the write
    # takes those: a value changed after validation goes in as a plain list of samples.
    progress = list(data["results"][result]["progress"])
    progress[sample] = {**progress[sample], **values}
    data["results"][result]["progress"] = progress


def late_progress_violation(data: dict) -> None:
    # The COPY of progress series is the last write; its last row breaks progress_series_times.
    _spoiled_sample(data, -1, -1, t=-1.0)


def middle_progress_violation(data: dict) -> None:
    # A row in the middle of the progress COPY (its arrays written as literals) breaks the check.
    _spoiled_sample(data, len(data["results"]) // 2, 0, t=-1.0)


def late_progress_type_error(data: dict) -> None:
    _spoiled_sample(data, -1, -1, failed="many")


@pytest.mark.parametrize(
    "spoil",
    [
        late_stream_violation,
        late_progress_violation,
        middle_progress_violation,
        late_progress_type_error,
    ],
)
def test_it_rolls_the_whole_upload_back_on_a_database_failure_at_a_late_row(db, spoil):
    """The serializer passed it; the database refuses a row near the end of the write, after the
    host, build, configuration, workload, run and results were inserted."""
    payload = with_streams(run_payload(version="16.1", host="fresh-host", repeats=3))
    data = validated(payload)
    spoil(data)
    before = stored_counts()
    with pytest.raises(Exception) as failure:
        run_submit(data=data, digest=payload_digest(payload))
    assert isinstance(failure.value, DatabaseError) or "psycopg" in type(failure.value).__module__
    assert stored_counts() == before
    # The connection is usable again: the next upload stores.
    good = with_streams(run_payload(version="16.1", host="fresh-host"))
    assert run_submit(data=validated(good), digest=payload_digest(good)).created
