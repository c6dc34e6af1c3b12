"""Runs that say how they were measured (warm-up, level order, per-level -T) and partial runs:
stored, shown on the run page, and compared at the levels they completed only."""

import json

import pytest
from benchhub_runner.jobspec import plan

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Result, Run
from benchhub.results.serializers import RunUploadSerializer
from benchhub.testing.payloads import run_payload

URL = "/api/v1/runs/"
STOPPED = {
    "stage": "level c=4 repeat=1 version=14",
    "reason": "pgbench -i failed: ERROR: division by zero",
    "clients": 4,
}


def post(client, payload):
    return client.post(URL, data=json.dumps(payload), content_type="application/json")


def test_it_stores_and_shows_how_a_run_was_measured(agent, anon_client):
    payload = run_payload(
        clients=(1, 2),
        warmup_s=12.0,
        shuffle_seed=7,
        level_sequence=[[2, 1], [1, 1], [1, 2], [2, 2]],
        level_durations={"2": 360.0},
    )
    payload["results"][2]["duration_s"] = 360.0

    response = post(agent.client, payload)

    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert (run.warmup_s, run.shuffle_seed, run.level_durations) == (12.0, 7, {"2": 360.0})
    assert run.level_sequence == [[2, 1], [1, 1], [1, 2], [2, 2]]
    assert Result.objects.get(run=run, clients=2, repeat=1).duration_s == 360.0
    page = anon_client.get(f"/runs/{run.uuid}/").content.decode()
    assert "a 12 s warm-up before each measurement" in page
    assert "shuffled per repeat (seed 7)" in page
    assert "2/1 → 1/1 → 1/2 → 2/2" in page
    assert "360 s at 2 clients" in page


def test_it_stores_and_shows_a_partial_run(agent, anon_client):
    payload = run_payload(clients=(1, 2, 4), status="partial", stopped=STOPPED)
    payload["results"] = [r for r in payload["results"] if r["clients"] < 4]

    response = post(agent.client, payload)

    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    assert (run.status, run.stop_clients, run.stop_stage) == ("partial", 4, STOPPED["stage"])
    assert "division by zero" in run.stop_reason
    page = anon_client.get(f"/runs/{run.uuid}/").content.decode()
    assert "Partial run: the sweep stopped at 4 clients" in page
    assert "division by zero" in page


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"status": "partial"}, "stopped"),
        ({"stopped": STOPPED}, "stopped"),
        ({"level_durations": {"64": 10.0}}, "level_durations"),
        ({"level_sequence": [[1]]}, "level_sequence"),
        ({"warmup_s": -1}, "warmup_s"),
    ],
)
def test_it_refuses_a_method_that_does_not_add_up(agent, overrides, field):
    response = post(agent.client, run_payload(**overrides))

    assert response.status_code == 400
    assert any(name.startswith(field) for name in response.json()["fields"]), response.json()
    assert Run.objects.count() == 0


def test_it_compares_a_partial_run_at_its_completed_levels_only(agent, anon_client):
    upload(agent, version="13.3", tps={1: [100], 2: [200], 4: [400]})
    upload(agent, version="14.1", tps={1: [110], 2: [220]}, status="partial", stopped=STOPPED)

    body = anon_client.get(
        "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,14.1"
    ).json()

    assert [row["clients"] for row in body["rows"]] == [1, 2]
    assert body["compared_clients"] == [1, 2]
    (note,) = body["partial"]
    assert (note["label"], note["stop_clients"], note["completed_clients"]) == ("14.1", 4, [1, 2])
    page = anon_client.get(
        "/compare/?workload=select-only&host=bench-01&versions=13.3,14.1"
    ).content.decode()
    assert "14.1 is a partial run: its sweep stopped at 4 clients" in page
    assert "Compared only at the levels every partial run completed: 1, 2 clients" in page


def test_the_upload_takes_the_plan_fields_a_run_records_with_wider_bounds():
    fields = RunUploadSerializer().fields
    assert [name for name in fields.keys() if name in plan.RUN_PLAN_FIELDS] == list(
        plan.RUN_PLAN_FIELDS
    )
    assert (
        fields["transactions_per_client"].help_text
        == plan.PLAN_SPECS["transactions_per_client"].help
    )
    assert fields["repeats"].default == plan.plan_default("repeats")
    # What a job may not ask, a run may have measured (an import, an older agent).
    assert (
        getattr(fields["duration_s"], "min_value", None)
        == 0.001
        < plan.PLAN_SPECS["duration_s"].minimum
    )
    assert getattr(fields["warmup_s"], "max_value", None) == 86400 > plan.MAX_WARMUP_S
    assert getattr(fields["clients"], "max_length", None) == 1000 > plan.MAX_LEVELS
