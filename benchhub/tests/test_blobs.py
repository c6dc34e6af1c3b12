"""Raw outputs, folded stacks and imported texts in an S3-compatible bucket (benchhub.blobs): a
real S3-speaking server process (moto's standalone server) holds them, the rows hold references,
and the API and pages read back what was sent; without a bucket nothing changes."""

import hashlib
import json
import os
import socket
import time
import uuid
from contextlib import suppress
from datetime import timedelta

import boto3
import pytest
from django.db import connection
from django.utils import timezone

from benchhub.blobs import BlobUnavailable
from benchhub.results.imports import run_import_outputs
from benchhub.results.models import (
    ProgressSeries,
    Result,
    ResultEvidence,
    ResultOutput,
    Run,
    RunImportText,
)
from benchhub.results.partitions import partitions_ensure, retention_apply
from benchhub.results.tests.test_backup import backup, scratch_database, snapshot
from benchhub.results.tests.test_evidence_upload import FOLDED
from benchhub.settings import storages_setting
from benchhub.testing import processes
from benchhub.testing.payloads import SELECT_ONLY_OUTPUT, evidence, run_payload
from benchhub.testing.processes import current_database_url

__all__ = ["scratch_database"]  # a fixture, imported for the backup test

BUCKET = "benchhub-blobs"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test-secret"}


@pytest.fixture(scope="module")
def s3_server():
    """moto_server on a free port of 127.0.0.1, with the bucket made; its endpoint URL."""
    port = processes.free_port()
    server = processes.Service(
        [str(processes.BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, **CREDENTIALS},
        name="moto",
    ).start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            break
        time.sleep(0.1)
    else:
        server.stop()
        raise RuntimeError(f"moto_server did not listen:\n{server.output()}")
    client(url).create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


def client(url: str):
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.fixture
def bucket(s3_server, settings, monkeypatch):
    """Blobs of at least 64 bytes go to the bucket, under a prefix of this test's own."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    settings.STORAGES = {
        **settings.STORAGES,
        "blobs": storages_setting(
            bucket=BUCKET, endpoint_url=s3_server, region="us-east-1", prefix=prefix
        ),
    }
    settings.BLOB_MIN_BYTES = 64
    return prefix, client(s3_server)


def objects(s3, prefix: str) -> dict[str, bytes]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/").get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed}


def column(sql: str) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [row[0] for row in cursor.fetchall()]


OUTPUTS = """
    SELECT o.text FROM results_resultoutput o JOIN results_result r ON r.id = o.result_id
    ORDER BY r.clients, r.repeat
"""


def upload(agent, *, version: str = "14.23", copies: int = 10) -> dict:
    """A run of 4 results whose outputs and profile (FOLDED `copies` times) go to the bucket;
    the outputs differ from another version's."""
    payload = run_payload(clients=(1, 2), repeats=2, version=version)
    payload["results"][0]["evidence"] = evidence(folded=FOLDED * copies)
    for item in payload["results"]:
        item["raw_output"] += f"\nserver version {version}\n"
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return payload


def test_it_keeps_raw_outputs_and_profiles_in_the_bucket_and_reads_them_back(agent, bucket):
    prefix, s3 = bucket
    payload = upload(agent)

    sent = [r["raw_output"] for r in payload["results"]]
    stored = column(OUTPUTS)
    assert all(value.startswith("bhblob:sha256:") for value in stored), stored
    in_bucket = objects(s3, prefix)
    for text in sent:
        digest = hashlib.sha256(text.encode()).hexdigest()
        assert in_bucket[f"{prefix}/sha256/{digest[:2]}/{digest}"] == text.encode()
    [profile] = column("SELECT profile::text FROM results_resultevidence WHERE profile IS NOT NULL")
    assert json.loads(profile).keys() == {"bhblob"}

    results = Result.objects.order_by("clients", "repeat")
    assert [r.raw_output for r in results] == sent
    assert ResultEvidence.objects.get(profile__isnull=False).profile["folded"] == FOLDED * 10
    page = agent.client.get(f"/runs/{payload['run_uuid']}/")
    assert page.status_code == 200
    assert "tps = 1010.000000" in page.content.decode()  # a raw output, from the bucket
    url = f"/api/v1/runs/{payload['run_uuid']}/results/?progress=1&evidence=1"
    listed = agent.client.get(url)
    assert listed.status_code == 200, listed.content
    rows = sorted(listed.json()["results"], key=lambda row: (row["clients"], row["repeat"]))
    assert [row["raw_output"] for row in rows] == sent
    assert rows[0]["evidence"]["profile"]["folded"] == FOLDED * 10


def test_it_stores_a_value_sent_twice_once(agent, bucket):
    prefix, s3 = bucket
    upload(agent)
    first = objects(s3, prefix)
    upload(agent)  # the same outputs and profile, another run
    assert objects(s3, prefix) == first
    assert Result.objects.count() == 8


def test_it_keeps_an_imported_text_in_the_bucket(bob, bucket):
    prefix, s3 = bucket
    text = SELECT_ONLY_OUTPUT.format(clients=4, transactions=8201, tps=4100.5, latency=0.975)
    run = run_import_outputs(
        texts=[("c4.txt", text)], version="16.1", host="old-box", config_text="", lscpu="", user=bob
    )
    [stored] = column(f"SELECT text FROM results_runimporttext WHERE run_id = {int(run.pk)}")  # noqa: S608
    assert stored.startswith("bhblob:sha256:")
    assert Run.objects.get(pk=run.pk).import_text == run.import_text
    assert text in run.import_text
    assert stored.removeprefix("bhblob:sha256:") in "".join(objects(s3, prefix))

    # Retention drops the text's month, and its object with it.
    when = timezone.now() - timedelta(days=8 * 31)
    partitions_ensure(first=when)
    Run.objects.filter(pk=run.pk).update(created_at=when)
    RunImportText.objects.filter(run=run).update(created_at=when)
    ResultOutput.objects.filter(result__run=run).update(created_at=when)
    ProgressSeries.objects.filter(result__run=run).update(created_at=when)
    retention_apply(keep_months=3)
    assert Run.objects.get(pk=run.pk).import_text == ""
    assert stored.removeprefix("bhblob:sha256:") not in "".join(objects(s3, prefix))


def test_it_keeps_small_values_and_rows_written_before_the_bucket_in_the_database(
    agent, s3_server, settings, monkeypatch
):
    payload = upload(agent)  # no bucket yet
    assert not any(v.startswith("bhblob:") for v in column(OUTPUTS))
    settings.STORAGES = {
        **settings.STORAGES,
        "blobs": storages_setting(
            bucket=BUCKET, endpoint_url=s3_server, region="us-east-1", prefix="unused"
        ),
    }
    results = Result.objects.order_by("clients", "repeat")
    assert [r.raw_output for r in results] == [r["raw_output"] for r in payload["results"]]


def test_it_reads_back_a_value_that_looks_like_a_reference_as_sent(agent, settings):
    payload = run_payload(clients=(1,), repeats=1)
    payload["results"][0]["raw_output"] = "bhblob:sha256:" + "0" * 64
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert Result.objects.get().raw_output == "bhblob:sha256:" + "0" * 64
    assert agent.client.get(f"/runs/{payload['run_uuid']}/").status_code == 200


def test_it_names_a_missing_object(agent, bucket):
    prefix, s3 = bucket
    upload(agent)
    for key in objects(s3, prefix):
        s3.delete_object(Bucket=BUCKET, Key=key)
    with pytest.raises(BlobUnavailable, match="is not in the bucket"):
        ResultOutput.objects.first()


def test_it_refuses_an_upload_whole_with_503_while_the_bucket_does_not_answer(
    agent, bucket, settings
):
    closed = f"http://127.0.0.1:{processes.free_port()}"
    settings.STORAGES = {
        **settings.STORAGES,
        "blobs": storages_setting(
            bucket=BUCKET, endpoint_url=closed, region="us-east-1", prefix="x"
        ),
    }
    payload = run_payload(clients=(1,), repeats=1)
    started = time.monotonic()
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert time.monotonic() - started < 15
    assert response.status_code == 503, response.content
    assert response.json()["error"] == "blob_storage_unavailable"
    assert not Run.objects.exists()  # nothing half stored: the agent's retry will store it all


@pytest.mark.django_db(transaction=True)
def test_it_copies_a_backup_to_the_bucket_and_restores_from_there(
    agent, bucket, s3_server, tmp_path, scratch_database, monkeypatch
):
    prefix, s3 = bucket
    upload(agent)
    original = snapshot(current_database_url())
    for name, value in {
        "BENCHHUB_BLOB_BUCKET": BUCKET,
        "BENCHHUB_BLOB_ENDPOINT_URL": s3_server,
        "BENCHHUB_BLOB_REGION": "us-east-1",
        "BENCHHUB_BLOB_PREFIX": prefix,
    }.items():
        monkeypatch.setenv(name, value)
    made = backup("dump", tmp_path / "benchhub.dump", current_database_url())
    assert made.returncode == 0, made.stderr
    location = f"s3://{BUCKET}/{prefix}/backups/benchhub.dump"
    assert location in made.stdout
    stored = objects(s3, f"{prefix}/backups")
    assert stored == {f"{prefix}/backups/benchhub.dump": (tmp_path / "benchhub.dump").read_bytes()}

    (tmp_path / "benchhub.dump").unlink()
    restored = backup("restore", location, scratch_database)
    assert restored.returncode == 0, restored.stderr
    assert snapshot(scratch_database) == original  # raw outputs as references to the same bucket

    missing = backup("restore", f"s3://{BUCKET}/{prefix}/backups/nope.dump", scratch_database)
    assert missing.returncode == 1 and "cannot fetch s3://" in missing.stderr


def test_retention_deletes_the_objects_of_the_months_it_drops_unless_still_referred_to(
    agent, bucket
):
    prefix, s3 = bucket
    old = upload(agent, version="15.4")
    shared_objects = {key for key in objects(s3, prefix)}
    shared = upload(agent, version="15.4")  # the same outputs and profile, kept this month
    dropped = upload(agent, version="13.3", copies=11)
    assert len(objects(s3, prefix)) > len(shared_objects)
    when = timezone.now() - timedelta(days=8 * 31)
    partitions_ensure(first=when)
    gone = [Run.objects.get(uuid=p["run_uuid"]) for p in (old, dropped)]
    Run.objects.filter(pk__in=[r.pk for r in gone]).update(created_at=when)
    for model in (ResultOutput, ResultEvidence):
        model.objects.filter(result__run__in=gone).update(created_at=when)
    ProgressSeries.objects.filter(result__run__in=gone).update(created_at=when)
    before = objects(s3, prefix)
    unique = {k for k in before if k not in shared_objects}

    retention_apply(keep_months=3)

    after = objects(s3, prefix)
    assert shared_objects <= after.keys()  # still referred to by the run of this month
    assert not unique & after.keys()  # the third run's own outputs and profile are gone
    kept = Run.objects.get(uuid=shared["run_uuid"])
    assert [r.raw_output for r in Result.objects.filter(run=kept).order_by("clients", "repeat")] \
        == [r["raw_output"] for r in shared["results"]]  # fmt: skip
    assert not ResultOutput.objects.filter(result__run__in=gone).exists()
