"""The attack suite, server half: each attack a person without rights, a person with a
read-only token, or another host's agent could try against a running BenchHub, tried against a
real gunicorn on the test database over HTTP. Each must be refused with a clear error (the API's
error shape, naming the host, scope or field), and must change nothing.

The agent half (job code run as an unprivileged user, the job-code checker, the token file, the
spool) lives with the agent's tests; docs/security.md lists every attack and its test.
"""

import json
import random
import re
from dataclasses import dataclass

import pytest
import requests
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from benchhub.accounts.services import personal_token_create
from benchhub.hosts.access import ALL_HOSTS
from benchhub.hosts.models import Host, HostGrant, RunnerToken
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job, JobSchedule
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_claim, job_create, schedule_save
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.models import Run
from benchhub.testing import processes
from benchhub.testing.payloads import run_payload

SIGN_IN_LIMIT = 3


@dataclass
class World:
    url: str
    mallory: str  # a person's token with every scope; no rights on any host
    trent: str  # a person staff trust to run jobs on every host, with every scope
    reader: str  # bob's read-only token
    bench01: str  # runner token of bench-01
    bench02: str  # runner token of bench-02
    run: str  # a run of bench-01
    job: Job  # bench-01's job, claimed by its agent
    schedule: JobSchedule  # bob's

    def call(self, token: str, method: str, path: str, body=None, raw: str | None = None):
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        data = raw.encode() if raw is not None else json.dumps(body) if body is not None else None
        return requests.request(method, f"{self.url}{path}", data=data, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """gunicorn on the test database and the rows the attacks aim at, once per module (every
    attack is refused and changes nothing, which each test checks); flushed at the end, as a
    transactional test would be. One trusted proxy hop, so tests can speak from several client
    addresses (X-Forwarded-For)."""
    env = {"BENCHHUB_PROXY_HOPS": "1", "BENCHHUB_RATELIMIT_LOGIN_USER": str(SIGN_IN_LIMIT)}
    with django_db_blocker.unblock():
        web = processes.Gunicorn(queue=processes.unique_queue(), env=env).start()
        try:
            built = _world(web.url)
        except BaseException:
            web.stop()
            call_command("flush", interactive=False, verbosity=0)
            raise
    yield built
    web.stop()
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def _world(url: str) -> World:
    users = get_user_model()
    bob = users.objects.create_user("bob", password="bob-pass-1")
    HostGrant.objects.create(tag=ALL_HOSTS, user=bob)
    mallory = users.objects.create_user("mallory", password="mallory-pass-1")
    trent = users.objects.create_user("trent", password="trent-pass-1")
    HostGrant.objects.create(tag=ALL_HOSTS, user=trent)
    bench01, runner01 = runner_token_create(host_name="bench-01")
    _, runner02 = runner_token_create(host_name="bench-02")
    payload = run_payload()
    headers = {"Authorization": f"Bearer {runner01}"}
    assert requests.post(f"{url}/api/v1/runs/", json=payload, headers=headers, timeout=30).ok
    request = JobInSerializer(data={**JOB, "host": "bench-01"})
    request.is_valid(raise_exception=True)
    job = job_create(created_by=bob, **request.validated_data)
    assert job_claim(token=bench01).pk == job.pk
    job.refresh_from_db()
    template = {**JOB, "host": "bench-01"}
    return World(
        url=url,
        mallory=personal_token_create(user=mallory, name="m")[1],
        trent=personal_token_create(user=trent, name="t")[1],
        reader=personal_token_create(user=bob, name="r", scopes=["read"])[1],
        bench01=runner01,
        bench02=runner02,
        run=payload["run_uuid"],
        job=job,
        schedule=schedule_save(
            name="nightly", crontab="0 2 * * *", template=template, created_by=bob
        ),
    )


@pytest.fixture(autouse=True)
def _reads(db):
    """Tests read the database to check nothing changed (in a transaction of their own)."""


def refused(response, status: int, code: str, *, says: str = "", field: str = "") -> dict:
    """Assert a clear refusal: the status, the error code, a sentence, the field at fault."""
    assert response.status_code == status, (response.status_code, response.text[:500])
    body = response.json()
    assert body["error"] == code, body
    assert body["detail"].strip(), body
    if says:
        assert says in json.dumps(body), body
    if field:
        assert field in body.get("fields", {}), body
    return body


WORKLOAD: dict = dict(JOB["workload"])  # type: ignore[call-overload]
SHELL_SETUP = {**WORKLOAD, "setup": ["\\! id > /tmp/owned; env | grep -c BENCHHUB"]}


# --- a signed-in person without rights on any host ------------------------------------------


def test_it_refuses_shell_setup_queued_by_a_person_without_rights_on_the_host(world):
    body = {**JOB, "workload": SHELL_SETUP, "host": "bench-01"}
    response = world.call(world.mallory, "POST", "/api/v1/jobs/", body)
    # The job-code checker answers first: no one may queue a shell escape, rights or not.
    refused(response, 400, "invalid", says="psql meta-command", field="workload.setup[0]")
    response = world.call(world.trent, "POST", "/api/v1/jobs/", body)
    refused(response, 400, "invalid", says="psql meta-command", field="workload.setup[0]")
    # Without the shell escape, the host is still not hers to use.
    response = world.call(world.mallory, "POST", "/api/v1/jobs/", {**JOB, "host": "bench-01"})
    refused(response, 403, "forbidden_host", says="bench-01", field="host")
    assert Job.objects.count() == 1


def test_it_refuses_a_job_for_any_host_queued_by_a_person_who_is_not_staff(world):
    response = world.call(world.mallory, "POST", "/api/v1/jobs/", JOB)
    refused(response, 403, "forbidden_host", says="only staff")


def test_it_refuses_a_job_by_host_tag_without_a_grant_on_the_tag(world):
    body = {**JOB, "host_tags": ["nvme"]}
    response = world.call(world.mallory, "POST", "/api/v1/jobs/", body)
    refused(response, 403, "forbidden_host", says="nvme", field="host_tags")


def test_it_refuses_a_schedule_on_a_host_without_rights(world):
    body = {"name": "mine", "crontab": "*/5 * * * *", "template": {**JOB, "host": "bench-01"}}
    response = world.call(world.mallory, "POST", "/api/v1/schedules/", body)
    refused(response, 403, "forbidden_host", says="bench-01", field="template.host")
    assert list(JobSchedule.objects.values_list("name", flat=True)) == ["nightly"]


def test_it_refuses_a_crontab_that_would_stop_beat(world):
    body = {"name": "beat-killer", "crontab": "* * * * ,", "template": JOB}
    response = world.call(world.trent, "POST", "/api/v1/schedules/", body)
    refused(response, 400, "invalid", says="day_of_week", field="crontab")
    assert not JobSchedule.objects.filter(name="beat-killer").exists()


def test_it_refuses_taking_over_another_persons_schedule_by_its_name(world):
    body = {"name": "nightly", "crontab": "* * * * *", "template": JOB}
    response = world.call(world.trent, "POST", "/api/v1/schedules/", body)
    refused(response, 403, "forbidden_schedule", says="nightly", field="name")
    world.schedule.refresh_from_db()
    assert world.schedule.crontab == "0 2 * * *" and world.schedule.created_by.username == "bob"


def test_it_refuses_deleting_another_persons_schedule(world):
    response = world.call(world.trent, "DELETE", f"/api/v1/schedules/{world.schedule.pk}/")
    refused(response, 403, "forbidden_schedule", says="nightly")
    assert JobSchedule.objects.filter(pk=world.schedule.pk).exists()


def test_it_refuses_cancelling_a_job_on_a_host_without_rights(world):
    response = world.call(world.mallory, "POST", f"/api/v1/jobs/{world.job.pk}/cancel/")
    refused(response, 403, "forbidden_host", says="bench-01")
    assert Job.objects.get(pk=world.job.pk).state == Job.State.CLAIMED


def test_it_refuses_granting_oneself_the_right_on_a_host(world):
    body = {"user": "mallory"}
    response = world.call(world.mallory, "POST", "/api/v1/hosts/bench-01/grants/", body)
    refused(response, 403, "forbidden_host", says="bench-01")
    assert not HostGrant.objects.filter(user__username="mallory").exists()


def test_it_refuses_hiding_a_run_as_invalid_without_rights_on_its_host(world):
    body = {"invalid": True, "reason": "I do not like it"}
    response = world.call(world.mallory, "POST", f"/api/v1/runs/{world.run}/marks/", body)
    refused(response, 403, "forbidden_host", says="bench-01", field="invalid")
    assert not Run.objects.get(uuid=world.run).invalid


def test_it_refuses_hiding_a_run_as_invalid_without_a_reason(world):
    response = world.call(world.trent, "POST", f"/api/v1/runs/{world.run}/marks/", {"invalid": 1})
    refused(response, 400, "invalid", field="reason")
    assert not Run.objects.get(uuid=world.run).invalid


@pytest.mark.parametrize("spelling", ["BENCH-01", "Bench-01", "bEnCh-01", "bench-01.", "BENCH-01."])
def test_it_refuses_an_import_under_an_agents_host_name_in_another_spelling(world, spelling):
    payload = run_payload(source="import", version="16.1", host=spelling)
    response = world.call(world.mallory, "POST", "/api/v1/runs/", payload)
    refused(response, 403, "forbidden_host", says="'bench-01'", field="host.name")
    assert list(Host.objects.filter(name__iexact="bench-01").values_list("name", flat=True)) == [
        "bench-01"
    ]
    assert not Host.objects.filter(name=spelling).exists()


def test_it_refuses_an_import_that_would_replace_an_agents_host_facts(world):
    host = Host.objects.get(name="bench-01")
    seen, facts = host.last_seen_at, host.current_facts_id
    payload = run_payload(source="import", version="16.1")
    payload["host"]["facts"]["cpu_model"] = "Forged CPU"
    response = world.call(world.mallory, "POST", "/api/v1/runs/", payload)
    refused(response, 403, "forbidden_host", says="bench-01", field="host.name")
    host.refresh_from_db()
    assert (host.last_seen_at, host.current_facts_id) == (seen, facts)
    assert host.current_facts.cpu_model != "Forged CPU"


def test_it_refuses_a_nul_character_in_free_form_json(world):
    body = {**JOB, "host": "bench-01", "workload": {**WORKLOAD, "options": ["a\u0000b"]}}
    response = world.call(world.trent, "POST", "/api/v1/jobs/", body)
    refused(response, 400, "invalid", says="NUL", field="workload.options[0]")


def test_it_refuses_a_lone_surrogate_in_free_form_json(world):
    raw = json.dumps({**JOB, "host": "bench-01"})[:-1] + ', "config_overrides": {"x": "\\udc00"}}'
    response = world.call(world.trent, "POST", "/api/v1/jobs/", raw=raw)
    refused(response, 400, "invalid", says="surrogate", field="config_overrides.x")


def test_it_refuses_1e999_in_free_form_json(world):
    raw = json.dumps({"progress": {"pct": 0}}).replace("0}", "1e999}")
    response = world.call(world.bench01, "POST", f"/api/v1/jobs/{world.job.pk}/heartbeat/", raw=raw)
    refused(response, 400, "invalid", says="finite", field="progress.pct")


def test_it_refuses_deeply_nested_free_form_json(world):
    raw = json.dumps({"progress": {"deep": "X"}}).replace('"X"', "[" * 5000 + "]" * 5000)
    response = world.call(world.bench01, "POST", f"/api/v1/jobs/{world.job.pk}/heartbeat/", raw=raw)
    assert response.status_code == 400 and response.json()["error"] in ("invalid", "parse_error")


def test_it_refuses_an_integer_beyond_its_column(world):
    body = {**JOB, "host": "bench-01", "scale": 2**31}
    response = world.call(world.trent, "POST", "/api/v1/jobs/", body)
    refused(response, 400, "invalid", field="scale")


def test_it_refuses_locking_an_account_out_by_failing_its_sign_in(world):
    """Failing bob's sign-in from several addresses past the limit does not stop bob."""
    # Three distinct addresses, none likely to have been throttled by an earlier session on the
    # same Redis within the window (the documentation prefix, 65,536 subnets).
    attacker = [f"2001:db8:{n:x}::1" for n in random.sample(range(1 << 16), 3)]
    for address in attacker:
        for _ in range(SIGN_IN_LIMIT):
            assert _sign_in(world.url, "bob", "wrong", address) == "failed"
    assert _sign_in(world.url, "bob", "wrong", attacker[0]) == "throttled"
    owner = f"2001:db8:{random.randrange(1 << 16):x}::2"
    assert _sign_in(world.url, "bob", "bob-pass-1", owner) == "signed in"


def _sign_in(url: str, username: str, password: str, address: str) -> str:
    session = requests.Session()
    headers = {"X-Forwarded-For": address}
    form = session.get(f"{url}/accounts/login/", headers=headers, timeout=30).text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    response = session.post(
        f"{url}/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": csrf},
        headers={**headers, "Referer": f"{url}/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )
    if response.status_code == 302:
        return "signed in"
    return "throttled" if "Too many failed sign-ins" in response.text else "failed"


# --- a person's read-only token -------------------------------------------------------------


def test_it_refuses_a_read_only_token_queueing_a_job(world):
    body = {**JOB, "host": "bench-01"}
    response = world.call(world.reader, "POST", "/api/v1/jobs/", body)
    refused(response, 403, "permission_denied", says="'queue' scope")
    assert world.call(world.reader, "GET", "/api/v1/jobs/").status_code == 200


def test_it_refuses_a_read_only_token_importing_a_run(world):
    payload = run_payload(host="lab-box", source="import")
    response = world.call(world.reader, "POST", "/api/v1/runs/", payload)
    refused(response, 403, "permission_denied", says="'import' scope")


def test_it_refuses_a_read_only_token_cancelling_or_scheduling(world):
    cancel = world.call(world.reader, "POST", f"/api/v1/jobs/{world.job.pk}/cancel/")
    refused(cancel, 403, "permission_denied", says="'queue' scope")
    body = {"name": "ro", "crontab": "0 1 * * *", "template": JOB}
    refused(world.call(world.reader, "POST", "/api/v1/schedules/", body), 403, "permission_denied")


def test_it_refuses_a_personal_token_minting_a_token(world):
    body = {"name": "forever", "scopes": ["read", "import", "queue"], "expires_at": None}
    response = world.call(world.trent, "POST", "/api/v1/tokens/", body)
    refused(response, 403, "permission_denied", says="cannot create tokens")
    assert response.status_code == 403


def test_it_refuses_a_token_that_never_expires(world):
    session = requests.Session()
    session.headers["X-Forwarded-For"] = "192.0.2.7"
    form = session.get(f"{world.url}/accounts/login/", timeout=30).text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    session.post(
        f"{world.url}/accounts/login/",
        data={"username": "bob", "password": "bob-pass-1", "csrfmiddlewaretoken": csrf},
        headers={"Referer": f"{world.url}/accounts/login/"},
        timeout=30,
    )
    body = {"name": "forever", "expires_at": "9999-01-01T00:00:00Z"}
    response = session.post(
        f"{world.url}/api/v1/tokens/",
        json=body,
        headers={"X-CSRFToken": session.cookies["csrftoken"] or "", "Referer": world.url},
        timeout=30,
    )
    refused(response, 400, "invalid", field="expires_at")
    made = session.post(
        f"{world.url}/api/v1/tokens/",
        json={"name": "default"},
        headers={"X-CSRFToken": session.cookies["csrftoken"] or "", "Referer": world.url},
        timeout=30,
    )
    assert made.status_code == 201 and made.json()["expires_at"] is not None


# --- another host's agent -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("heartbeat", {"progress": {"stage": "run"}}),
        ("finish", {"outcome": "done"}),
        ("release", {"reason": "mine now"}),
    ],
)
def test_it_refuses_another_hosts_agent_driving_a_job_it_does_not_hold(world, action, body):
    before = Job.objects.values("state", "claimed_by", "lease_expires_at").get(pk=world.job.pk)
    response = world.call(world.bench02, "POST", f"/api/v1/jobs/{world.job.pk}/{action}/", body)
    refused(response, 409, "lease_lost", says=str(world.job.pk))
    after = Job.objects.values("state", "claimed_by", "lease_expires_at").get(pk=world.job.pk)
    assert after == before


@pytest.mark.parametrize(
    ("action", "fields"),
    [("heartbeat", {}), ("finish", {"outcome": "failed", "stage": "run"}), ("release", {})],
)
def test_it_refuses_a_stale_attempt_of_the_holding_agent(world, action, fields):
    # Each action's own fields only: an unknown one would be refused before the attempt is read.
    body = {"attempt": world.job.attempt + 1, **fields}
    response = world.call(world.bench01, "POST", f"/api/v1/jobs/{world.job.pk}/{action}/", body)
    refused(response, 409, "stale_attempt", field="attempt")
    assert Job.objects.get(pk=world.job.pk).state == Job.State.CLAIMED


def test_it_refuses_another_hosts_agent_uploading_as_that_host(world):
    payload = run_payload(version="16.2")
    response = world.call(world.bench02, "POST", "/api/v1/runs/", payload)
    refused(response, 403, "forbidden_host", says="bench-02", field="host.name")
    assert Run.objects.count() == 1


def test_it_refuses_another_hosts_agent_reading_the_queue(world):
    response = world.call(world.bench02, "GET", f"/api/v1/jobs/{world.job.pk}/")
    refused(response, 403, "permission_denied")


def test_it_refuses_a_heartbeat_stage_longer_than_its_column(world):
    body = {"progress": {"stage": "s" * 500}}
    response = world.call(world.bench01, "POST", f"/api/v1/jobs/{world.job.pk}/heartbeat/", body)
    refused(response, 400, "invalid", field="progress.stage")
    assert Job.objects.get(pk=world.job.pk).progress == {}


def test_it_refuses_another_hosts_agent_queueing_or_minting(world):
    refused(world.call(world.bench02, "POST", "/api/v1/jobs/", JOB), 403, "permission_denied")
    refused(
        world.call(world.bench02, "POST", "/api/v1/tokens/", {"name": "x"}),
        403,
        "permission_denied",
    )
    assert RunnerToken.objects.count() == 2 and timezone.now()
