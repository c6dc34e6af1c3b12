"""The `benchhub` command (runners/benchhub_cli) run as a user runs it, a process of its own,
against a real gunicorn on the test database: login and its config file, status, compare of
uploaded runs in each format with the exit statuses a CI job reads, submit of good and bad job
files, wait on a failed job, try up to its queued job, and each error exit."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command

from benchhub.accounts.services import personal_token_create
from benchhub.builds.models import Recipe
from benchhub.hosts.access import ALL_HOSTS
from benchhub.hosts.models import HostGrant
from benchhub.hosts.services import host_get_or_create, runner_token_create
from benchhub.jobs.models import Job, JobSchedule
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing import processes
from benchhub.testing.payloads import result, run_payload

BENCHHUB = str(Path(sys.executable).parent / "benchhub")
CI = Path(__file__).resolve().parents[2] / "docs" / "ci"
BASE = {1: [1000.0, 1010.0, 990.0, 1005.0], 4: [4000.0, 4010.0, 3990.0, 4005.0]}
SLOWER = {1: [800.0, 810.0, 790.0, 805.0], 4: [4001.0, 4012.0, 3993.0, 4003.0]}
SAME = {1: [1001.0, 1009.0, 992.0, 1004.0], 4: [4002.0, 4008.0, 3991.0, 4006.0]}


@dataclass
class World:
    url: str
    queue_token: str  # bob's token with the read and queue scopes; bob may define recipes
    read_token: str  # bob's read-only token
    runner: str  # the runner token of bench-01
    runs: dict[str, str]  # version -> run uuid


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """gunicorn and a Celery worker (which aggregates uploaded runs) on the test database, with
    three aggregated runs of bench-01 (13.3, 15.4 slower at one client, 15.5 the same) and a
    host with no agent (imported-01); flushed at the end."""
    queue = processes.unique_queue()
    with django_db_blocker.unblock():
        web = processes.Gunicorn(queue=queue).start()
        worker = processes.celery_worker(queue).start()
        try:
            yield _world(web.url)
        finally:
            web.stop()
            worker.stop()
            call_command("flush", interactive=False, verbosity=0)


def _world(url: str) -> World:
    bob = get_user_model().objects.create_user("bob", password="bob-pass-1")
    HostGrant.objects.create(tag=ALL_HOSTS, user=bob)
    bob.user_permissions.add(Permission.objects.get(codename="add_recipe"))
    _, runner = runner_token_create(host_name="bench-01")
    host_get_or_create(name="imported-01")  # the host record of imported runs: no agent
    runs = {}
    for version, tps in (("13.3", BASE), ("15.4", SLOWER), ("15.5", SAME)):
        payload = run_payload(version=version, clients=tuple(tps), repeats=4)
        payload["results"] = [result(c, r, v) for c, vs in tps.items() for r, v in enumerate(vs, 1)]
        answer = requests.post(
            f"{url}/api/v1/runs/", json=payload, headers=_bearer(runner), timeout=30
        )
        assert answer.status_code == 201, answer.text
        run_aggregate(run_id=Run.objects.get(uuid=payload["run_uuid"]).id)
        runs[version] = payload["run_uuid"]
    return World(
        url=url,
        queue_token=personal_token_create(user=bob, name="q", scopes=["read", "queue"])[1],
        read_token=personal_token_create(user=bob, name="r", scopes=["read"])[1],
        runner=runner,
        runs=runs,
    )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def _forget(django_db_blocker):
    """What a test made through the server is committed: gone after the test (after the test's
    own transaction has rolled back), so each test starts with no job, recipe or schedule."""
    yield
    with django_db_blocker.unblock():
        Job.objects.all().delete()
        JobSchedule.objects.all().delete()
        Recipe.objects.all().delete()


@pytest.fixture(autouse=True)
def _reads(_forget, db):
    """Tests read the database to see what the command did (in a transaction of their own)."""


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "config"


def env_for(world: World, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHHUB_")}
    env.update(
        XDG_CONFIG_HOME=str(home), BENCHHUB_SERVER=world.url, BENCHHUB_TOKEN=world.queue_token
    )
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}


def benchhub(*argv: str, env: dict[str, str], cwd: Path | None = None):
    return subprocess.run(
        [BENCHHUB, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


# --- login and its config ---------------------------------------------------------------------


def test_it_saves_the_login_readable_by_its_owner_only_where_xdg_says(world, home):
    env = env_for(world, home, BENCHHUB_SERVER="", BENCHHUB_TOKEN="")
    done = benchhub("login", "--server", world.url, "--token", world.read_token, env=env)
    assert done.returncode == 0, done.stderr
    path = home / "benchhub" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"server": world.url, "token": world.read_token}
    # the saved login serves the next command, and the environment overrides it
    assert benchhub("status", env=env).returncode == 0
    elsewhere = benchhub(
        "status", "--retries", "1", env={**env, "BENCHHUB_SERVER": "http://127.0.0.1:9"}
    )
    assert elsewhere.returncode == 2
    assert "http://127.0.0.1:9" in elsewhere.stderr


def test_it_refuses_to_save_a_token_the_server_refuses(world, home):
    env = env_for(world, home, BENCHHUB_SERVER="", BENCHHUB_TOKEN="")
    done = benchhub("login", "--server", world.url, "--token", "bhp_00000000_nope", env=env)
    assert done.returncode == 2
    assert "refused the token" in done.stderr
    assert not (home / "benchhub" / "config.json").exists()


def test_it_names_the_url_of_a_server_it_cannot_reach(world, home):
    url = f"http://127.0.0.1:{processes.free_port()}"
    done = benchhub("status", "--retries", "2", env=env_for(world, home, BENCHHUB_SERVER=url))
    assert done.returncode == 2
    assert f"cannot reach the server {url}" in done.stderr
    assert "after 2 attempts" in done.stderr


def test_it_shows_the_queue_and_the_agents(world, home):
    done = benchhub("status", env=env_for(world, home))
    assert done.returncode == 0, done.stderr
    assert "agent bench-01: online" in done.stdout
    assert "host imported-01: imported runs only, no agent" in done.stdout
    assert "offline" not in done.stdout
    body = json.loads(benchhub("status", "--format", "json", env=env_for(world, home)).stdout)
    assert [(h["name"], h["agent"]) for h in body["hosts"]] == [
        ("bench-01", True),
        ("imported-01", False),
    ]


# --- compare ------------------------------------------------------------------------------------


def compare(world, home, *argv: str):
    base = ["compare", "--host", "bench-01", "--workload", "select-only"]
    return benchhub(*base, *argv, env=env_for(world, home))


def test_it_exits_1_when_a_level_is_slower_and_prints_the_table(world, home):
    done = compare(world, home, "13.3", "15.4")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "select-only on bench-01, threshold 2%"
    level_1 = next(line for line in lines if line.split()[:1] == ["1"])
    assert level_1.split()[1:4] == ["1,002.5", "802.5", "-20.0%"]
    assert level_1.split()[-2:] == ["slower", "4/4"]
    assert any(line.startswith("15.4 against 13.3: slower at 1") for line in lines)
    assert lines[-1].startswith(f"{world.url}/compare/?workload=select-only&host=bench-01")


def test_it_reads_a_comparison_without_any_token(world, home):
    argv = ["compare", "--host", "bench-01", "--workload", "select-only", "13.3", "15.4"]
    done = benchhub(*argv, env=env_for(world, home, BENCHHUB_TOKEN=""))
    assert done.returncode == 1, done.stderr
    assert not (home / "benchhub").exists()


def test_it_exits_0_when_no_level_is_slower(world, home):
    done = compare(world, home, "13.3", "15.5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "slower" not in done.stdout.replace("slower at", "")


def test_fail_on_decides_which_verdict_fails(world, home):
    assert compare(world, home, "--fail-on", "never", "13.3", "15.4").returncode == 0
    # 13.3 against 15.4 is faster at 1 client: a change, not a slowdown
    assert compare(world, home, "15.4", "13.3").returncode == 0
    assert compare(world, home, "--fail-on", "change", "15.4", "13.3").returncode == 1


def test_it_gives_a_pull_request_comment_in_markdown(world, home):
    done = compare(world, home, "--format", "markdown", "13.3", "15.4")
    assert done.returncode == 1
    text = done.stdout
    assert text.startswith("### BenchHub: select-only on bench-01\n")
    assert "| clients | 13.3 tps | 15.4 tps | change | 95% interval | verdict | repeats |" in text
    assert "| 1 | 1,002.5 | 802.5 | -20.0% |" in text and "| **slower** | 4/4 |" in text
    assert "\n15.4 against 13.3: slower at 1" in text
    assert f"[Open the comparison]({world.url}/compare/?workload=select-only" in text


def test_it_gives_the_comparison_as_json_with_its_exit_status(world, home):
    done = compare(world, home, "--format", "json", "13.3", "15.4")
    body = json.loads(done.stdout)
    assert done.returncode == body["exit_status"] == 1
    assert body["comparison"]["series"][1]["run"] == world.runs["15.4"]
    # the permalink opens the same comparison the page shows
    assert requests.get(body["permalink"], timeout=30).status_code == 200


def test_it_compares_two_runs_by_their_uuids(world, home):
    runs = [world.runs["13.3"], world.runs["15.4"]]
    done = benchhub("compare", "--runs", *runs, "--format", "json", env=env_for(world, home))
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["permalink"].endswith(f"/compare/?runs={runs[0]}%2C{runs[1]}")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--host", "bench-99", "--workload", "select-only"], "--host: No host named 'bench-99'"),
        (["--host", "bench-01", "--workload", "nope"], "--workload: no run of workload nope"),
        (["--host", "bench-01", "--workload", "select-only"], "versions: no run of 9.6"),
    ],
)
def test_it_names_what_the_comparison_cannot_find(world, home, argv, says):
    done = benchhub("compare", *argv, "13.3", "9.6", env=env_for(world, home))
    assert done.returncode == 2
    assert says in done.stderr


# --- submit ---------------------------------------------------------------------------------------

JOB_TOML = """\
versions = ["13", "14"]
host = "bench-01"
scale = 1
clients = [1, 2]
duration_s = 2
repeats = 1

[workload]
name = "select-only"
builtin = "select-only"
"""


def test_it_queues_a_job_kept_as_a_toml_file(world, home, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(JOB_TOML)
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 0, done.stderr
    job = Job.objects.get(pk=int(done.stdout))
    assert (job.versions, job.host.name, job.clients) == (["13", "14"], "bench-01", [1, 2])


def test_it_saves_a_schedule_kept_as_a_json_file(world, home, tmp_path):
    template = {**json.loads(json.dumps(_job())), "host": "bench-01"}
    path = tmp_path / "nightly.json"
    path.write_text(json.dumps({"name": "nightly", "crontab": "0 2 * * *", "template": template}))
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 0, done.stderr
    assert JobSchedule.objects.filter(name="nightly", crontab="0 2 * * *").exists()


def _job() -> dict:
    return {
        "versions": ["13", "14"],
        "workload": {"name": "select-only", "builtin": "select-only"},
        "clients": [1, 2],
        "duration_s": 2,
    }


def test_it_names_an_unknown_field_its_file_and_line_and_queues_nothing(world, home, tmp_path):
    toml = tmp_path / "job.toml"
    toml.write_text(JOB_TOML + 'optons = ["-M", "simple"]\n')
    done = benchhub("submit", str(toml), env=env_for(world, home))
    assert done.returncode == 2
    assert f"{toml}:11: workload.optons: unknown field" in done.stderr
    body = json.dumps({**_job(), "host": "bench-01", "repeat": 3}, indent=1)
    as_json = tmp_path / "job.json"
    as_json.write_text(body)
    done = benchhub("submit", str(as_json), env=env_for(world, home))
    assert done.returncode == 2
    line = body.splitlines().index(' "repeat": 3') + 1
    assert f"{as_json}:{line}: repeat: unknown field" in done.stderr
    assert not Job.objects.exists()


def test_it_names_the_field_and_line_the_server_refuses(world, home, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(JOB_TOML.replace("clients = [1, 2]", "clients = [0, 2]"))
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 2
    assert f"{path}:4: clients" in done.stderr
    assert "greater than or equal to 1" in done.stderr


def test_it_submits_required_host_tags_and_names_the_line_of_a_bad_one(world, home, tmp_path):
    path = tmp_path / "job.toml"
    tagged = JOB_TOML.replace('host = "bench-01"', 'host_tags = ["nvme", "56-core"]')
    path.write_text(tagged.replace('"56-core"', '"56 Core"'))
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 2
    assert f"{path}:2: host_tags[1]: '56 Core': use 1 to 64 lower-case" in done.stderr
    assert not Job.objects.exists()
    path.write_text(tagged)
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 0, done.stderr
    assert Job.objects.get(pk=int(done.stdout)).host_tags == ["nvme", "56-core"]


def test_it_names_a_syntax_error_and_its_line(world, home, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(JOB_TOML.replace("scale = 1", "scale = = 1"))
    done = benchhub("submit", str(path), env=env_for(world, home))
    assert done.returncode == 2
    assert "not valid TOML" in done.stderr and "line 3" in done.stderr


def test_it_names_the_scope_a_read_only_token_lacks(world, home, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(JOB_TOML)
    done = benchhub("submit", str(path), env=env_for(world, home, BENCHHUB_TOKEN=world.read_token))
    assert done.returncode == 2
    assert "lacks the 'queue' scope" in done.stderr
    assert not Job.objects.exists()


# --- apply ---------------------------------------------------------------------------------------


def _schedule_file(directory: Path, name: str, crontab: str, **template: Any) -> Path:
    path = directory / f"{name}.json"
    body = {**_job(), "host": "bench-01", **template}
    path.write_text(json.dumps({"name": name, "crontab": crontab, "template": body}, indent=1))
    return path


def _pause_on_the_page(world: World, schedule_id: int) -> None:
    """Bob signs in and presses Pause (through the server: the test's transaction would hold
    the row a write of its own touched)."""
    session = requests.Session()
    session.get(f"{world.url}/accounts/login/", timeout=30)
    csrf = {"X-CSRFToken": session.cookies.get("csrftoken") or "", "Referer": world.url}
    signed_in = session.post(
        f"{world.url}/accounts/login/",
        data={"username": "bob", "password": "bob-pass-1"},
        headers=csrf,
        timeout=30,
    )
    assert signed_in.status_code == 200 and "bob" in signed_in.text, signed_in.text
    paused = session.post(
        f"{world.url}/schedules/{schedule_id}/enable/",
        data={"enabled": "0"},
        headers={**csrf, "X-CSRFToken": session.cookies.get("csrftoken") or ""},
        timeout=30,
    )
    assert "paused." in paused.text, paused.text


def test_apply_dry_run_prints_the_plan_and_changes_nothing(world, home, tmp_path):
    directory = tmp_path / "nightly"
    directory.mkdir()
    _schedule_file(directory, "a", "0 2 * * *")
    (directory / "job.toml").write_text(JOB_TOML)  # a job, not a schedule: skipped
    done = benchhub("apply", str(directory), "--dry-run", env=env_for(world, home))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"create a ({directory / 'a.json'})\n"
    assert "job.toml: skipped" in done.stderr and "1 would change" in done.stderr
    assert not JobSchedule.objects.exists() and not Job.objects.exists()


def test_apply_creates_changes_and_prunes_only_the_sets_schedules(world, home, tmp_path):
    directory = tmp_path / "nightly"
    directory.mkdir()
    env = env_for(world, home)
    by_hand = tmp_path / "by-hand.json"
    by_hand.write_text(_schedule_file(directory, "by-hand", "0 5 * * *").read_text())
    (directory / "by-hand.json").unlink()
    assert benchhub("submit", str(by_hand), env=env).returncode == 0
    a = _schedule_file(directory, "a", "0 2 * * *")
    b = _schedule_file(directory, "b", "0 3 * * *")
    done = benchhub("apply", str(directory), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"create a ({a})", f"create b ({b})"]
    assert dict(JobSchedule.objects.values_list("name", "file_set")) == {
        "a": "nightly", "b": "nightly", "by-hand": "",
    }  # fmt: skip
    again = benchhub("apply", str(directory), env=env)
    assert again.stdout == "" and "0 changed, 2 unchanged" in again.stderr

    _schedule_file(directory, "a", "0 4 * * *", clients=[1, 4])
    b.unlink()
    _pause_on_the_page(world, JobSchedule.objects.get(name="a").pk)
    plan = benchhub("apply", str(directory), "--dry-run", "--prune", env=env)
    assert plan.stdout.splitlines() == [
        f"change a: crontab, template.clients ({a})",
        "delete b",
    ]
    assert JobSchedule.objects.get(name="a").crontab == "0 2 * * *"
    kept = benchhub("apply", str(directory), env=env)  # without --prune b stays, said so
    assert kept.returncode == 0, kept.stderr
    assert "b: its file is gone; --prune deletes it" in kept.stderr
    assert JobSchedule.objects.filter(name="b").exists()
    schedule = JobSchedule.objects.get(name="a")
    assert (schedule.crontab, schedule.template["clients"]) == ("0 4 * * *", [1, 4])
    assert not schedule.enabled  # a file without `enabled` leaves the pause alone
    pruned = benchhub("apply", str(directory), "--prune", env=env)
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout == "delete b\n"
    assert sorted(JobSchedule.objects.values_list("name", flat=True)) == ["a", "by-hand"]


def test_apply_names_the_file_and_field_the_server_refuses(world, home, tmp_path):
    path = _schedule_file(tmp_path, "bad", "61 * * * *")
    done = benchhub("apply", str(tmp_path), env=env_for(world, home))
    assert done.returncode == 2
    assert f"{path}:3: crontab" in done.stderr
    assert not JobSchedule.objects.exists()
    done = benchhub("apply", str(tmp_path / "nowhere"), env=env_for(world, home))
    assert done.returncode == 2 and "not a directory" in done.stderr


# --- wait, try ---------------------------------------------------------------------------------


def _queue(world: World, versions: list[str]) -> int:
    body = {**_job(), "versions": versions, "host": "bench-01"}
    answer = requests.post(
        f"{world.url}/api/v1/jobs/", json=body, headers=_bearer(world.queue_token), timeout=30
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _fail_as_the_agent(world: World, *, stage: str, message: str) -> int:
    """Claim the queued job as bench-01's agent and finish it failed; its id."""
    claim = requests.post(
        f"{world.url}/api/v1/jobs/claim/", headers=_bearer(world.runner), timeout=30
    ).json()
    finish = {"outcome": "failed", "stage": stage, "message": message, "attempt": claim["attempt"]}
    answer = requests.post(
        f"{world.url}/api/v1/jobs/{claim['id']}/finish/",
        json=finish, headers=_bearer(world.runner), timeout=30,
    )  # fmt: skip
    assert answer.ok, answer.text
    return claim["id"]


def test_wait_exits_4_with_the_failed_stage_and_the_log_tail(world, home):
    job_id = _queue(world, ["13", "14"])
    _fail_as_the_agent(world, stage="initdb", message="initdb: error\nFATAL: no space left")
    done = benchhub("wait", str(job_id), env=env_for(world, home))
    assert done.returncode == 4
    assert f"job {job_id} failed at stage initdb" in done.stderr
    assert "  FATAL: no space left" in done.stderr


def test_ctrl_c_leaves_the_job_running_and_says_how_to_follow_it(world, home):
    job_id = _queue(world, ["13", "14"])
    follower = subprocess.Popen(
        [BENCHHUB, "wait", str(job_id)], env=env_for(world, home),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(3)
    follower.send_signal(signal.SIGINT)
    _, err = follower.communicate(timeout=30)
    assert follower.returncode == 5
    assert f"benchhub wait {job_id}" in err
    assert Job.objects.get(pk=job_id).state == "queued"


def test_wait_rides_out_a_server_restart_and_gives_up_after_its_patience(world, home):
    job_id = _queue(world, ["13", "14"])
    second = processes.Gunicorn(queue=processes.unique_queue()).start()
    try:
        env = env_for(world, home, BENCHHUB_SERVER=second.url)
        argv = [BENCHHUB, "wait", str(job_id), "--retries", "1", "--patience", "60"]
        follower = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        time.sleep(2)
        second.stop()
        time.sleep(4)
        second.start()
        _fail_as_the_agent(world, stage="initdb", message="FATAL: no space left")
        _, err = follower.communicate(timeout=60)
        assert follower.returncode == 4, err
        assert f"cannot reach the server {second.url}" in err and "the job runs on" in err
        second.stop()
        impatient = benchhub("wait", str(job_id), "--retries", "1", "--patience", "1", env=env)
        assert impatient.returncode == 2
        assert f"cannot reach the server {second.url}" in impatient.stderr
    finally:
        second.stop()


@pytest.fixture
def master(world):
    return _recipe(world, "master", "master")


def _recipe(world: World, name: str, ref: str) -> str:
    """A git recipe, as `try --against <name>` finds one."""
    recipe: dict[str, Any] = {
        "name": name,
        "source": {"kind": "git", "url": "https://example.org/pg.git", "ref": ref},
    }
    answer = requests.post(
        f"{world.url}/api/v1/recipes/", json=recipe, headers=_bearer(world.queue_token), timeout=30
    )
    assert answer.status_code == 201, answer.text
    return name


def test_try_defines_the_recipe_queues_one_job_and_reports_its_failure(
    world, home, tmp_path, master
):
    patch = tmp_path / "slow-commit.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    argv = ["try", str(patch), "--against", "master", "--host", "bench-01", "--clients", "1,8"]
    argv += ["--format", "markdown"]
    trial = subprocess.Popen(
        [BENCHHUB, *argv], env=env_for(world, home), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not Job.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    job = Job.objects.get()
    assert job.versions == ["master", "master+slow-commit"]
    assert job.clients == [1, 8] and job.repeats == 1  # a job's default, as the API's
    assert job.builds["master+slow-commit"]["patches"][0]["name"] == "slow-commit.patch"
    _fail_as_the_agent(
        world,
        stage="build",
        message="master+slow-commit: build failed at patch:\n1 out of 1 hunk FAILED",
    )
    out, err = trial.communicate(timeout=60)
    assert trial.returncode == 4, err
    assert "failed at stage build" in err and "  1 out of 1 hunk FAILED" in err
    # the pull request's comment says why there is no verdict
    assert out.startswith("### BenchHub: no verdict\n\njob ")
    assert "failed at stage build" in out and "\n```\n" in out and "1 out of 1 hunk FAILED" in out
    # the same patch again reuses the recipe; other content under its name is refused
    assert Recipe.objects.filter(name="master+slow-commit").count() == 1
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+c\n")
    done = benchhub(*argv, env=env_for(world, home))
    assert done.returncode == 2
    assert "recipe master+slow-commit exists with other patches" in done.stderr
    assert Job.objects.count() == 1


def test_ctrl_c_during_a_trial_leaves_its_job_running_and_says_how_to_follow_it(
    world, home, tmp_path, master
):
    patch = tmp_path / "p.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    trial = _try(world, home, patch)
    deadline = time.monotonic() + 60
    while not Job.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    job = Job.objects.get()
    time.sleep(1)  # following it now
    trial.send_signal(signal.SIGINT)
    _, err = trial.communicate(timeout=30)
    assert trial.returncode == 5, err
    assert f"benchhub wait {job.pk}" in err
    assert Job.objects.get(pk=job.pk).state == "queued"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--against", "nope", "--host", "bench-01"], "--against: no recipe named nope"),
        (["--against", "master", "--host", "bench-99"], "--host: no host named bench-99"),
        (
            ["--against", "master", "--host", "bench-01", "--workload", "nope"],
            "--workload: no workload nope",
        ),
    ],
)
def test_try_names_the_option_it_cannot_use(world, home, tmp_path, master, argv, says):
    patch = tmp_path / "p.patch"
    patch.write_text("--- a/x\n")
    done = benchhub("try", str(patch), *argv, env=env_for(world, home))
    assert done.returncode == 2
    assert says in done.stderr
    assert not Job.objects.exists()


def test_try_against_a_git_ref_defines_its_base_from_the_servers_repository(
    world, home, tmp_path, master
):
    patch = tmp_path / "p.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    argv = ["try", str(patch), "--against", "REL_15_18", "--host", "bench-01"]
    trial = subprocess.Popen([BENCHHUB, *argv], env=env_for(world, home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not Job.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        job = Job.objects.get()
    finally:
        trial.kill()
        trial.communicate()
    assert job.versions == ["15.18", "15.18+p"]
    base = Recipe.objects.get(name="15.18")
    assert (base.url, base.ref) == ("https://example.org/pg.git", "REL_15_18")
    assert job.builds["15.18+p"]["source"] == {
        "kind": "git", "url": "https://example.org/pg.git", "ref": "REL_15_18"
    }  # fmt: skip
    # A second repository makes a bare ref ambiguous: the choices are named, nothing defined.
    other: dict[str, Any] = {
        "name": "17devel", "source": {"kind": "git", "url": "/srv/pg.git", "ref": "x"}
    }  # fmt: skip
    answer = requests.post(f"{world.url}/api/v1/recipes/", json=other,
                           headers=_bearer(world.queue_token), timeout=30)  # fmt: skip
    assert answer.status_code == 201, answer.text
    argv[3] = "REL_16_BETA1"
    done = benchhub(*argv, env=env_for(world, home))
    assert done.returncode == 2
    said = "as a git ref it is ambiguous: https://example.org/pg.git as 15.18, master build it; "
    assert said in done.stderr
    assert "/srv/pg.git as 17devel build it; choose with --repo URL" in done.stderr
    assert not Recipe.objects.filter(name__startswith="16beta1").exists()


def test_try_refuses_a_patch_that_is_not_utf8(world, home, tmp_path, master):
    patch = tmp_path / "latin1.patch"
    patch.write_bytes("caf\xe9\n".encode("latin-1"))
    done = benchhub(
        "try", str(patch), "--against", "master", "--host", "bench-01", env=env_for(world, home)
    )
    assert done.returncode == 2
    assert f"{patch}: the patch is not UTF-8 (byte 3)" in done.stderr
    assert not Recipe.objects.filter(name__contains="+").exists()


def _measure_as_the_agent(
    world: World, tps: dict[str, dict[int, list[float]]], measured: dict[str, str] | None = None
) -> list[str]:
    """Claim the job queued for bench-01 and do what its agent would: upload one run per
    version with these tps per level and repeat (the first entry for a version the dict does
    not name), as the version `measured` says it found (a series' release), then finish it
    done; the job's versions."""
    deadline = time.monotonic() + 60
    while True:
        claim = requests.post(
            f"{world.url}/api/v1/jobs/claim/", headers=_bearer(world.runner), timeout=30
        )
        if claim.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    job = claim.json()
    for version in job["versions"]:
        levels = tps.get(version) or next(iter(tps.values()))
        found = (measured or {}).get(version, version)
        payload = run_payload(version=found, clients=tuple(levels), repeats=len(levels[1]))
        payload["results"] = [
            result(c, r, v) for c, vs in levels.items() for r, v in enumerate(vs, 1)
        ]
        payload["job"] = {"id": job["id"], "attempt": job["attempt"]}
        answer = requests.post(
            f"{world.url}/api/v1/runs/", json=payload, headers=_bearer(world.runner), timeout=30
        )
        assert answer.status_code == 201, answer.text
    answer = requests.post(
        f"{world.url}/api/v1/jobs/{job['id']}/finish/",
        json={"outcome": "done", "attempt": job["attempt"]}, headers=_bearer(world.runner),
        timeout=30,
    )  # fmt: skip
    assert answer.ok, answer.text
    return job["versions"]


def _try(world, home, patch: Path, *extra: str, against: str = "master") -> subprocess.Popen:
    argv = ["try", str(patch), "--against", against, "--host", "bench-01"]
    return subprocess.Popen(
        [BENCHHUB, *argv, "--workload", "select-only", "--clients", "1,4", *extra],
        env=env_for(world, home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_try_prints_slower_as_a_pull_request_comment_and_exits_1(world, home, tmp_path, master):
    patch = tmp_path / "slow-commit.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    trial = _try(world, home, patch, "--format", "markdown")
    versions = _measure_as_the_agent(world, {"master": BASE, "master+slow-commit": SLOWER})
    assert versions == ["master", "master+slow-commit"]
    out, err = trial.communicate(timeout=120)
    assert trial.returncode == 1, err
    assert "| 1 | 1,002.5 | 802.5 | -20.0% |" in out and "| **slower** | 4/4 |" in out
    assert "master+slow-commit against master: slower at 1" in out
    assert "versions=master%2Cmaster%2Bslow-commit&baseline=master)" in out


def test_try_settle_exits_3_when_the_extra_jobs_leave_a_level_inconclusive(world, home, tmp_path):
    """One run a side (a base no other test measured): settle queues separate jobs, since
    only they narrow an interval over run means; the command waits for every one of them, and
    runs whose means scatter either way leave the level inconclusive."""
    base = _recipe(world, "master@5e771e5ab0c1", "5e771e5ab0c1")
    patch = tmp_path / "maybe.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    trial = _try(world, home, patch, "--clients", "1", "--settle", "--settle-rounds", "1",
                 against=base)  # fmt: skip
    runs = [
        {base: {1: [1000.0, 1100.0]}, f"{base}+maybe": {1: [950.0, 1090.0]}},
        {base: {1: [1100.0, 1150.0]}, f"{base}+maybe": {1: [1000.0, 1040.0]}},
        {base: {1: [950.0, 1000.0]}, f"{base}+maybe": {1: [1080.0, 1120.0]}},
    ]
    for tps in runs:
        assert set(_measure_as_the_agent(world, tps)) == {base, f"{base}+maybe"}
    out, err = trial.communicate(timeout=120)
    assert trial.returncode == 3, out + err
    assert "settling: jobs " in err
    assert "inconclusive" in out


def test_submit_wait_follows_the_job_to_the_verdict_of_the_releases_it_measured(
    world, home, tmp_path
):
    path = tmp_path / "job.toml"
    path.write_text(JOB_TOML.replace('["13", "14"]', '["12", "16"]'))
    submit = subprocess.Popen(
        [BENCHHUB, "submit", str(path), "--wait"], env=env_for(world, home),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    tps = {"12": BASE, "16": SLOWER}
    _measure_as_the_agent(world, tps, measured={"12": "12.9", "16": "16.1"})
    out, err = submit.communicate(timeout=120)
    assert submit.returncode == 1, out + err
    assert "job " in err and " done" in err  # the progress line, to the end
    assert "clients  12.9 tps  16.1 tps" in out
    assert "16.1 against 12.9: slower at 1" in out


# --- the ready-to-copy CI files -------------------------------------------------------------------


def test_the_ci_script_leaves_the_pull_request_comment_and_benchhubs_exit_status(
    world, home, tmp_path, master
):
    patch = tmp_path / "slow-commit.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    env = env_for(
        world, home, BENCHHUB_AGAINST="master", BENCHHUB_HOST="bench-01",
        BENCHHUB_WORKLOAD="select-only", BENCHHUB_CLIENTS="1,4",
        PATH=f"{Path(BENCHHUB).parent}:{os.environ['PATH']}",
    )  # fmt: skip
    script = subprocess.Popen(
        ["sh", str(CI / "benchhub-try.sh"), str(patch)], env=env, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _measure_as_the_agent(world, {"master": BASE, "master+slow-commit": SLOWER})
    out, err = script.communicate(timeout=120)
    assert script.returncode == 1, err
    assert Job.objects.get().repeats == 1  # BENCHHUB_REPEATS unset: a job's default
    comment = (tmp_path / "benchhub-comment.md").read_text()
    assert comment == out
    assert comment.startswith("### BenchHub: select-only on bench-01")
    assert "| **slower** |" in comment


def test_the_ci_files_run_that_script_and_pass_yamllint(tmp_path):
    files = sorted(CI.glob("*.yml"))
    assert [f.name for f in files] == ["github-actions.yml", "gitlab-ci.yml"]
    for path in files:
        assert "sh docs/ci/benchhub-try.sh" in json.dumps(yaml.safe_load(path.read_text()))
    yamllint = [str(Path(sys.executable).parent / "yamllint"), "--strict"]
    root = CI.parents[1]
    done = subprocess.run([*yamllint, str(CI)], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    # the same configuration refuses what it should (so the check above can fail)
    bad = tmp_path / "bad.yml"
    bad.write_text("jobs:\n  try:\n    steps: [a,  b]\n    steps: []\n")
    done = subprocess.run([*yamllint, str(bad)], cwd=root, capture_output=True, text=True)
    assert done.returncode == 1
    assert "duplication of key" in done.stdout


def test_try_names_the_scope_a_read_only_token_lacks_and_defines_nothing(
    world, home, tmp_path, master
):
    patch = tmp_path / "p.patch"
    patch.write_text("--- a/x\n")
    argv = ["try", str(patch), "--against", "master", "--host", "bench-01"]
    done = benchhub(*argv, env=env_for(world, home, BENCHHUB_TOKEN=world.read_token))
    assert done.returncode == 2
    assert "lacks the 'queue' scope" in done.stderr
    assert list(Recipe.objects.values_list("name", flat=True)) == ["master"]
    assert not Job.objects.exists()
