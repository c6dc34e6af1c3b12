"""make demo's bookkeeping: the jobs it queues, once, for this machine's agent alone."""

import importlib.util
from pathlib import Path

import pytest
from benchhub_runner.config import config_load

from benchhub.accounts.tokens import token_split
from benchhub.hosts.models import RunnerToken
from benchhub.jobs.models import Job

SPEC = importlib.util.spec_from_file_location(
    "demo", Path(__file__).resolve().parents[1] / "demo.py"
)
assert SPEC is not None and SPEC.loader is not None
demo = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(demo)

pytestmark = pytest.mark.django_db


def test_it_queues_select_only_and_idle_connections_for_13_against_14_on_its_host():
    host = demo.demo_host_name()
    demo.demo_token(host)
    select_only, idle = demo.demo_jobs_queue(host)

    assert select_only.versions == idle.versions == ["13", "14"]
    assert (select_only.host.name, idle.host.name) == (host, host)
    assert select_only.clients == [1, 2]
    assert select_only.profile_clients == 2
    assert (select_only.repeats, select_only.workload["builtin"]) == (9, "select-only")
    assert idle.workload["catalog_entry"] == "e2-idle-connections"
    assert [s["role"] for s in idle.workload["streams"]] == ["background", "measured"]
    # Both experiments have repeats to give a verdict; one repeat a side never can.
    assert idle.repeats == 8
    assert idle.clients == [8]
    assert (idle.duration_s, idle.warmup_s) == (select_only.duration_s, select_only.warmup_s)


def test_it_keeps_the_jobs_of_a_second_demo_and_requeues_only_a_failed_one():
    host = demo.demo_host_name()
    demo.demo_token(host)
    first = demo.demo_jobs_queue(host)
    assert demo.demo_jobs_queue(host) == first
    Job.objects.filter(pk=first[1].pk).update(state=Job.State.FAILED)
    again = demo.demo_jobs_queue(host)
    assert again[0] == first[0]
    assert again[1] != first[1]
    assert Job.objects.filter(host__name=host).count() == 3


def test_it_revokes_the_last_demo_token_with_a_new_one():
    host = demo.demo_host_name()
    old = demo.demo_token(host)
    new = demo.demo_token(host)
    revoked = {
        token.prefix: token.revoked_at is not None
        for token in RunnerToken.objects.filter(host__name=host)
    }
    assert revoked == {token_split(old)[1]: True, token_split(new)[1]: False}


def test_it_links_each_comparison_opening_at_its_verdicts_with_the_why_of_its_level(capsys):
    host = demo.demo_host_name()
    demo.demo_token(host)
    jobs = demo.demo_jobs_queue(host)

    demo.announce(base="http://127.0.0.1:8000", host_name=host, jobs=jobs)

    links = [line for line in capsys.readouterr().out.splitlines() if "/compare/?" in line]
    assert links[0].endswith("versions=13%2C14&threshold=5&why=2")
    assert len(links) == 2 and not [link for link in links if "#" in link]


def test_it_runs_its_agent_without_the_evidence_pass_polling_often_and_profiling(tmp_path):
    config = config_load(
        path=demo.agent_config_write(tmp_path),
        overrides={"server": "http://127.0.0.1:8000", "token": "bhr_x"},
    )
    assert (config.evidence_pass, config.profile) == (False, True)
    assert config.poll_interval_s == 2


@pytest.mark.parametrize(("euid", "trusted"), [(0, False), (1000, True)])
def test_it_trusts_its_own_jobs_only_where_no_sandbox_can_hold_them(
    tmp_path, monkeypatch, euid, trusted
):
    # As root the agent sandboxes job code; otherwise it would refuse every demo job.
    monkeypatch.setattr(demo.os, "geteuid", lambda: euid)
    config = config_load(
        path=demo.agent_config_write(tmp_path),
        overrides={"server": "http://127.0.0.1:8000", "token": "bhr_x"},
    )
    assert config.trust_job_code is trusted
