"""Uploading runs through POST /api/v1/runs/: storage, idempotency, refusals, atomicity."""

import json

import pytest

from benchhub.builds.models import Build
from benchhub.configs.models import ServerConfig
from benchhub.hosts.models import Host, HostFacts
from benchhub.results.models import ProgressSeries, Result, Run
from benchhub.testing.payloads import run_payload

URL = "/api/v1/runs/"


def post(client, payload, **extra):
    return client.post(URL, data=json.dumps(payload), content_type="application/json", **extra)


def stored_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Run, Result, ProgressSeries, Host, HostFacts, Build, ServerConfig)
    }


def test_it_stores_a_complete_run(agent):
    payload = run_payload(version="14.23", repeats=2, clients=(1, 2))
    response = post(agent.client, payload)
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert response.json()["run_uuid"] == payload["run_uuid"]
    assert (run.host.name, run.build.version, run.workload.name) == (
        "bench-01",
        "14.23",
        "select-only",
    )
    assert run.build.major == "14" and run.build.minor == 23
    assert run.submitted_by_runner.host.name == "bench-01"
    results = {(r.clients, r.repeat): r for r in run.results.all()}
    assert sorted(results) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    sent = payload["results"][3]
    stored = results[(sent["clients"], sent["repeat"])]
    assert stored.tps == sent["tps"]
    assert stored.latency_avg_ms == pytest.approx(sent["latency_avg_ms"])
    assert stored.statements == sent["statements"]
    assert stored.raw_output == sent["raw_output"]
    assert stored.comparability_key == run.comparability_key
    assert stored.progress_series.t == [1.0, 2.0]
    facts = run.host_facts
    assert (facts.cores, facts.filesystem, facts.sysctl["vm.swappiness"]) == (20, "xfs", "0")
    assert run.settings["port"] == "55001"
    # The configuration's identity leaves out where the cluster lives and untouched defaults.
    assert run.config.settings == {"shared_buffers": "128MB", "max_connections": "100"}


def test_it_stores_a_retry_once(agent):
    payload = run_payload()
    first = post(agent.client, payload)
    second = post(agent.client, payload)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    assert Run.objects.filter(uuid=payload["run_uuid"]).count() == 1
    assert Result.objects.count() == len(payload["results"])


def test_it_refuses_other_content_under_a_stored_uuid(agent):
    payload = run_payload()
    assert post(agent.client, payload).status_code == 201
    changed = {**payload, "results": payload["results"][:1]}
    response = post(agent.client, changed)
    assert response.status_code == 409
    assert "run_uuid" in response.json()["fields"]
    assert Result.objects.count() == len(payload["results"])


def test_it_shares_hosts_builds_and_configs_between_runs(agent):
    post(agent.client, run_payload(version="13.3"))
    post(agent.client, run_payload(version="14.0"))
    assert (Host.objects.count(), HostFacts.objects.count(), ServerConfig.objects.count()) == (
        1,
        1,
        1,
    )
    keys = set(Run.objects.values_list("comparability_key", flat=True))
    assert len(keys) == 1, "runs differing only in version must be comparable"


def _bad(payload, path, value):
    """The payload with the value at a dotted path (list indexes as ints) replaced or removed."""
    target = payload
    *parents, last = path
    for key in parents:
        target = target[key]
    if value is _MISSING:
        del target[last]
    else:
        target[last] = value
    return payload


_MISSING = object()


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("run_uuid",), _MISSING, "run_uuid"),
        (("host",), _MISSING, "host"),
        (("build", "version"), "fourteen", "build.version"),
        (("results", 0, "tps"), -5.0, "results[0].tps"),
        (("results", 0, "tps"), "1000", "results[0].tps"),
        (("results", 0, "tps"), "NaN", "results[0].tps"),
        (("results", 1, "clients"), 0, "results[1].clients"),
        (("results", 0, "transactions"), "42", "results[0].transactions"),
        (("scale",), "1", "scale"),
        (("clients",), [0, 1], "clients[0]"),
        (("results", 0, "progress", 1, "tps"), "fast", "results[0].progress[1].tps"),
        (("results", 0, "progress", 0, "t"), _MISSING, "results[0].progress[0].t"),
        # Past the bigint column (was a database error, 500), and past a float's range.
        (("results", 0, "progress", 0, "failed"), 10**25, "results[0].progress[0].failed"),
        (("results", 0, "progress", 1, "tps"), 10**400, "results[0].progress[1].tps"),
        (("host", "facts", "sockets"), "two", "host.facts.sockets"),
        (("results",), [], "results"),
        (("status",), "great", "status"),
    ],
)
def test_it_names_each_bad_field_and_writes_nothing(agent, path, value, field):
    before = stored_counts()
    payload = _bad(run_payload(), path, value)
    response = post(agent.client, payload)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid"
    assert field in body["fields"], body
    assert stored_counts() == before


def test_it_refuses_results_outside_the_sweep(agent):
    payload = run_payload(clients=(1, 2))
    payload["results"][0]["clients"] = 64
    payload["results"][1]["repeat"] = 9
    body = post(agent.client, payload).json()
    assert {"results[0].clients", "results[1].repeat"} <= set(body["fields"])


def test_it_refuses_a_valid_looking_result_without_tps(agent):
    payload = run_payload()
    del payload["results"][0]["tps"]
    body = post(agent.client, payload).json()
    assert "results[0].tps" in body["fields"]


def test_it_stores_an_aborted_result_as_aborted(agent):
    payload = run_payload(status="aborted")
    payload["results"][0].update(
        tps=None, aborted=True, errors=["client 0 aborted in command 1 of script 0"]
    )
    assert post(agent.client, payload).status_code == 201
    stored = Result.objects.get(clients=1, repeat=1)
    assert stored.aborted and stored.tps is None
    assert stored.errors == ["client 0 aborted in command 1 of script 0"]


def test_it_refuses_an_11_mb_body_with_413(agent, settings):
    payload = run_payload()
    payload["results"][0]["raw_output"] = "x" * (11 * 1024 * 1024)
    before = stored_counts()
    response = post(agent.client, payload)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert stored_counts() == before


def test_it_refuses_malformed_json(agent):
    response = agent.client.post(URL, data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_it_refuses_a_runner_writing_for_another_host(other_agent):
    before = stored_counts()
    response = post(other_agent.client, run_payload(host="bench-01"))
    assert response.status_code == 403
    assert "host.name" in response.json()["fields"]
    assert stored_counts() == before


def test_it_refuses_anonymous_uploads(anon_client, db):
    response = post(anon_client, run_payload())
    assert response.status_code in (401, 403)
    assert Run.objects.count() == 0


def test_it_stores_nothing_on_a_failure_in_the_middle_of_the_write(db):
    """The database refuses the last result after the host, build, run and first results were
    written: the whole upload rolls back."""
    from django.db import IntegrityError

    from benchhub.results.serializers import RunUploadSerializer
    from benchhub.results.services import payload_digest, run_submit

    payload = run_payload()
    upload = RunUploadSerializer(data=payload)
    upload.is_valid(raise_exception=True)
    data = upload.validated_data
    data["results"][-1]["tps"] = None  # passes no serializer, but violates result_valid_has_tps
    before = stored_counts()
    with pytest.raises(IntegrityError):
        run_submit(data=data, digest=payload_digest(payload))
    assert stored_counts() == before


def test_it_accepts_a_run_without_its_optional_parts(agent):
    payload = run_payload()
    for key in ("init", "finished_at", "scale"):
        del payload[key]
    payload["host"] = {"name": "bench-01"}
    payload["configuration"] = {"settings": {}}
    response = post(agent.client, payload)
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert (run.init_output, run.init_timings, run.scale) == ("", {}, None)
