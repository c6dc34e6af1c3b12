"""End to end: an A/A job, a real agent that runs one version as two separate series, and the
comparison of the two runs, marked A/A, from the steady-state means the real worker stored."""

import pytest

from benchhub.hosts.services import runner_token_create
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_create
from benchhub.jobs.tests.test_agent_e2e import SMALL_JOB, finish, wait_for
from benchhub.results.models import Result, Run
from benchhub.testing import processes


@pytest.mark.slow
def test_it_runs_an_a_a_job_as_two_series_whose_comparison_is_a_a(server, work_dir, client):
    _, token = runner_token_create(host_name="aa-host")
    request = JobInSerializer(
        data={**SMALL_JOB, "versions": ["14"], "aa": True, "clients": [1], "repeats": 2}
    )
    request.is_valid(raise_exception=True)
    job = job_create(actor="test", **request.validated_data)
    assert job.versions == ["14", "14"]
    agent = processes.agent_once(
        env=processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    )
    output = finish(agent)
    assert agent.returncode == 0, output + server.output()
    job.refresh_from_db()
    assert job.state == "done", (job.failure_stage, job.failure_message, output)
    first, second = Run.objects.filter(job=job).order_by("id")
    assert first.build_id == second.build_id and first.uuid != second.uuid
    assert first.comparability_key == second.comparability_key
    valid = Result.objects.filter(run__job=job, aborted=False)
    wait_for(
        lambda: valid.count() == 4 and not valid.filter(steady_tps__isnull=True).exists(),
        timeout_s=60,
        what="the worker's steady-state means",
    )
    body = client.get(f"/api/v1/compare/?runs={first.uuid},{second.uuid}").json()
    assert body["aa"] is True
    (level,) = body["verdicts"][0]["levels"]
    assert level["clients"] == 1 and level["repeats"] == [2, 2]
    assert level["tps_ratio_low"] < level["tps_ratio"] < level["tps_ratio_high"]
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert f"/compare/?runs={first.uuid},{second.uuid}" in page
