"""The permission matrix: every API operation against every kind of caller.

Callers: anonymous; bob, a signed-in person; alice, staff; the agents of bench-01 and bench-02;
a revoked runner token of bench-01; an expired personal token of bob. The world each case runs
in: a run uploaded by bench-01, job A pinned to bench-01 and held by its agent, job B queued for
bench-01, a schedule, and a personal token of bob.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.accounts.services import personal_token_create
from benchhub.accounts.tokens import token_split
from benchhub.hosts.models import RunnerToken
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_claim, job_create, schedule_save
from benchhub.jobs.tests.test_queue import JOB
from benchhub.regressions.models import Regression
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload
from benchhub.testing.processes import ROOT

OUTPUT = (ROOT / "runners/tests/fixtures/pgbench/pg15-select-only-P1-r-T3.txt").read_text()

CALLERS = ["anon", "bob", "alice", "bench01", "bench02", "revoked", "expired", "mallory"]


@dataclass
class World:
    clients: dict[str, APIClient]
    run: str
    job_a: int
    job_b: int
    schedule: int
    bob_token: str
    regression: int


def _bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _job(host: str) -> Job:
    data = JobInSerializer(data={**JOB, "host": host})
    data.is_valid(raise_exception=True)
    return job_create(**data.validated_data)


@pytest.fixture
def world(alice, bob, mallory, agent, other_agent) -> World:
    run = run_payload()
    assert agent.client.post("/api/v1/runs/", run, format="json").status_code == 201
    job_a = _job("bench-01")
    prefix = token_split(agent.token)[1]
    assert job_claim(token=RunnerToken.objects.get(prefix=prefix)).pk == job_a.pk
    job_b = _job("bench-01")
    _, revoked = runner_token_create(host_name="bench-01", token_name="old")
    RunnerToken.objects.filter(name="old").update(revoked_at=timezone.now())
    schedule = schedule_save(name="nightly", crontab="0 2 * * *", template=JOB, created_by=alice)
    bob_token, _ = personal_token_create(user=bob, name="laptop")
    _, expired = personal_token_create(
        user=bob, name="old", expires_at=timezone.now() - timedelta(seconds=1)
    )
    clients = {
        "anon": APIClient(),
        "bob": _session(bob),
        "alice": _session(alice),
        "bench01": agent.client,
        "bench02": other_agent.client,
        "revoked": _bearer(revoked),
        "expired": _bearer(expired),
        "mallory": _session(mallory),
    }
    regression = _regression(run["run_uuid"])
    return World(
        clients, run["run_uuid"], job_a.pk, job_b.pk, schedule.pk, bob_token.prefix, regression
    )


def _regression(run_uuid: str) -> int:
    run = Run.objects.get(uuid=run_uuid)
    return Regression.objects.create(
        kind="regression", comparability_key=run.comparability_key, clients=1, host=run.host,
        workload=run.workload, run_before=run, run_after=run, before_tps=1000.0,
        after_tps=800.0, before_runs=6, after_runs=6, change=-0.2, p_value=1e-9,
    ).pk  # fmt: skip


def _upload(source: str, host: str = "bench-01") -> dict:
    return run_payload(host=host, source=source)


# (name, method, path template, body) -> expected status per caller, in CALLERS order.
# Reading is open (public instance) except the queue, which agents do not read at all: an agent
# learns its job from the claim, and cannot list or read any job, its host's or another's.
MATRIX: list[tuple[str, str, str, Callable[[], dict] | None, list[int]]] = [
    ("run list", "get", "/api/v1/runs/", None, [200, 200, 200, 200, 200, 401, 401, 200]),
    ("run detail", "get", "/api/v1/runs/{run}/", None, [200, 200, 200, 200, 200, 401, 401, 200]),
    ("run results", "get", "/api/v1/runs/{run}/results/", None, [200] * 5 + [401, 401, 200]),
    # Only bench-01's agent uploads an agent run of bench-01; people upload imports.
    ("upload agent run", "post", "/api/v1/runs/", lambda: _upload("agent"),
     [401, 403, 403, 201, 403, 401, 401, 403]),
    # People import under host names of their own; an agent's host is the agent's alone.
    ("upload import", "post", "/api/v1/runs/", lambda: _upload("import", "lab-box"),
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("import as agent's host", "post", "/api/v1/runs/", lambda: _upload("import"),
     [401, 403, 403, 201, 403, 401, 401, 403]),
    # Imports are people's: an agent uploads only what it measured; a read-only token cannot.
    ("import outputs", "post", "/api/v1/imports/outputs/",
     lambda: {"host": "old-box", "outputs": [{"text": OUTPUT}]},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("import summary", "post", "/api/v1/imports/summary/",
     lambda: {"host": "paper", "builtin": "select-only", "table": "clients 13 14\n8 100 110"},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("job list", "get", "/api/v1/jobs/", None, [200, 200, 200, 403, 403, 401, 401, 200]),
    ("job detail", "get", "/api/v1/jobs/{job_a}/", None, [200, 200, 200, 403, 403, 401, 401, 200]),
    ("job create", "post", "/api/v1/jobs/", lambda: JOB, [401, 201, 201, 403, 403, 401, 401, 403]),
    ("job cancel", "post", "/api/v1/jobs/{job_a}/cancel/", None,
     [401, 200, 200, 403, 403, 401, 401, 403]),
    # Job B is for bench-01: its agent gets it, bench-02's gets nothing.
    ("job claim", "post", "/api/v1/jobs/claim/", None, [401, 403, 403, 200, 204, 401, 401, 403]),
    ("job heartbeat", "post", "/api/v1/jobs/{job_a}/heartbeat/", lambda: {"progress": {}},
     [401, 403, 403, 200, 409, 401, 401, 403]),
    ("job finish", "post", "/api/v1/jobs/{job_a}/finish/",
     lambda: {"outcome": "failed", "stage": "run", "message": "x"},
     [401, 403, 403, 200, 409, 401, 401, 403]),
    ("job release", "post", "/api/v1/jobs/{job_a}/release/", lambda: {"reason": "stop"},
     [401, 403, 403, 200, 409, 401, 401, 403]),
    ("status", "get", "/api/v1/status/", None, [200, 200, 200, 403, 403, 401, 401, 200]),
    ("schedule list", "get", "/api/v1/schedules/", None, [200, 200, 200, 403, 403, 401, 401, 200]),
    ("schedule create", "post", "/api/v1/schedules/",
     lambda: {"name": "weekly", "crontab": "0 3 * * 0", "template": JOB},
     [401, 201, 201, 403, 403, 401, 401, 403]),
    # alice's schedule: only she and staff delete it.
    ("schedule delete", "delete", "/api/v1/schedules/{schedule}/", None,
     [401, 403, 204, 403, 403, 401, 401, 403]),
    ("token list", "get", "/api/v1/tokens/", None, [401, 200, 200, 403, 403, 401, 401, 200]),
    ("token create", "post", "/api/v1/tokens/", lambda: {"name": "ci"},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    # A person revokes their own tokens only: alice (staff) does not find bob's here.
    ("token revoke", "delete", "/api/v1/tokens/{bob_token}/", None,
     [401, 204, 404, 403, 403, 401, 401, 404]),
    ("hosts", "get", "/api/v1/hosts/", None, [200] * 5 + [401, 401, 200]),
    # An agent reports the runs its spool set aside, for its own host only (the token's).
    ("spool report", "post", "/api/v1/hosts/spool/", lambda: {"set_aside": []},
     [401, 403, 403, 204, 204, 401, 401, 403]),
    # There is no API to create hosts or runner tokens: staff use runner_create and the admin.
    ("host create", "post", "/api/v1/hosts/", lambda: {"name": "x"},
     [401, 405, 405, 405, 405, 401, 401, 405]),
    ("builds", "get", "/api/v1/builds/", None, [200] * 5 + [401, 401, 200]),
    ("catalog", "get", "/api/v1/workloads/catalog/", None, [200] * 5 + [401, 401, 200]),
    ("compare", "get", "/api/v1/compare/?workload=select-only&host=bench-01&versions=14.23",
     None, [200] * 5 + [401, 401, 200]),
    # One version: nothing to settle, once the caller may ask.
    ("compare settle", "post",
     "/api/v1/compare/settle/?workload=select-only&host=bench-01&versions=14.23", None,
     [401, 409, 409, 403, 403, 401, 401, 409]),
    ("comment", "post", "/api/v1/runs/{run}/comments/", lambda: {"body": "hi"},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("tag", "post", "/api/v1/runs/{run}/tags/", lambda: {"name": "noisy"},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("mark", "post", "/api/v1/runs/{run}/marks/", lambda: {"invalid": True, "reason": "swap"},
     [401, 200, 200, 403, 403, 401, 401, 403]),
    ("review events", "get", "/api/v1/review/events/", None,
     [401, 200, 200, 403, 403, 401, 401, 200]),
    ("regression list", "get", "/api/v1/regressions/", None, [200] * 5 + [401, 401, 200]),
    ("alert groups", "get", "/api/v1/regressions/groups/", None, [200] * 5 + [401, 401, 200]),
    ("regression detail", "get", "/api/v1/regressions/{regression}/", None,
     [200] * 5 + [401, 401, 200]),
    # Triage is for staff (or holders of regressions.change_regression): bob only reads.
    ("regression state", "post", "/api/v1/regressions/{regression}/state/",
     lambda: {"state": "acknowledged"}, [401, 403, 200, 403, 403, 401, 401, 403]),
    ("subscription list", "get", "/api/v1/regressions/subscriptions/", None,
     [401, 200, 200, 403, 403, 401, 401, 200]),
    ("subscribe", "post", "/api/v1/regressions/subscriptions/", lambda: {"host": "bench-01"},
     [401, 201, 201, 403, 403, 401, 401, 201]),
    ("webhook list", "get", "/api/v1/regressions/webhooks/", None,
     [401, 200, 200, 403, 403, 401, 401, 200]),
    ("webhook add", "post", "/api/v1/regressions/webhooks/",
     lambda: {"url": "https://hooks.example.com/x"}, [401, 201, 201, 403, 403, 401, 401, 201]),
    ("delivery log", "get", "/api/v1/regressions/deliveries/", None,
     [401, 200, 200, 403, 403, 401, 401, 200]),
]  # fmt: skip


@pytest.mark.parametrize("caller", CALLERS)
def test_it_lets_each_caller_do_only_its_part(world, caller):
    """Every operation of the matrix as `caller`, each rolled back after, so the next one finds
    the same world; all mismatches are reported together."""
    client = world.clients[caller]
    column = CALLERS.index(caller)
    wrong = []
    for name, method, path, body, statuses in MATRIX:
        url = path.format(
            run=world.run,
            job_a=world.job_a,
            schedule=world.schedule,
            bob_token=world.bob_token,
            regression=world.regression,
        )
        with transaction.atomic():
            response = getattr(client, method)(url, data=body() if body else None, format="json")
            transaction.set_rollback(True)
        if response.status_code != statuses[column]:
            wrong.append((name, statuses[column], response.status_code, response.content[:200]))
        elif response.status_code >= 400:
            assert set(response.json()) <= {"error", "detail", "fields"}, name
    assert wrong == []


def test_it_refuses_an_agent_upload_into_a_job_of_another_host(world, other_agent):
    job = Job.objects.get(pk=world.job_a)
    payload = run_payload(host="bench-02", job={"id": job.pk, "attempt": job.attempt})
    response = other_agent.client.post("/api/v1/runs/", data=payload, format="json")
    assert response.status_code == 409 and response.json()["error"] == "stale_job"
    assert not Run.objects.filter(uuid=payload["run_uuid"]).exists()


def test_it_refuses_a_person_upload_into_a_job(world):
    job = Job.objects.get(pk=world.job_a)
    payload = run_payload(
        host="lab-box", source="import", job={"id": job.pk, "attempt": job.attempt}
    )
    response = world.clients["alice"].post("/api/v1/runs/", data=payload, format="json")
    assert response.status_code == 409
    assert not Run.objects.filter(uuid=payload["run_uuid"]).exists()


def test_it_changes_nothing_on_a_refused_call(world):
    job = Job.objects.get(pk=world.job_a)
    before = (job.state, job.claimed_by_id, job.lease_expires_at, job.progress)
    bench02 = world.clients["bench02"]
    for action, body in [("heartbeat", {"progress": {"x": 1}}), ("release", {"reason": "x"})]:
        assert bench02.post(f"/api/v1/jobs/{job.pk}/{action}/", body, format="json").status_code
    finish = {"outcome": "failed", "stage": "run", "message": "forged"}
    bench02.post(f"/api/v1/jobs/{job.pk}/finish/", finish, format="json")
    world.clients["revoked"].post(f"/api/v1/jobs/{job.pk}/finish/", finish, format="json")
    job.refresh_from_db()
    assert (job.state, job.claimed_by_id, job.lease_expires_at, job.progress) == before
