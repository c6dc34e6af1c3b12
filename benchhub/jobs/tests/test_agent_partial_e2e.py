"""End to end: a sweep that fails midway, run by a real agent against real servers, is stored
as partial runs that say where and why it stopped, shown so and compared at its completed levels.
"""

import pytest

from benchhub.compare.selectors import comparison_get
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.tests.test_agent_e2e import finish, no_postgres_under, wait_for
from benchhub.results.models import LevelAggregate, Run
from benchhub.testing import processes

FAILING_AT_2 = {
    "versions": ["14", "13"],
    "workload": {
        "name": "select-only-failing-at-2",
        "builtin": "select-only",
        "query_mode": "prepared",
        # A real failure from the server at the second level.
        "level_setup": ["SELECT CASE WHEN {clients} = 2 THEN 1 / 0 ELSE 1 END"],
    },
    "scale": 1,
    "clients": [1, 2, 4],
    "duration_s": 1.0,
    "warmup_s": 0.0,
    "repeats": 1,
}


@pytest.mark.slow
def test_it_stores_the_levels_before_a_failure_as_partial_runs(server, work_dir, client):
    _, token = runner_token_create(host_name="e2e-host")
    job = Job.objects.create(**FAILING_AT_2)
    agent = processes.agent_once(
        env=processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    )
    output = finish(agent)

    job.refresh_from_db()
    assert (job.state, job.failure_stage) == ("failed", "level c=2 repeat=1 version=14"), output
    runs = {r.build.major: r for r in Run.objects.filter(job=job).select_related("build")}
    assert set(runs) == {"14", "13"}, output + server.output()
    for run in runs.values():
        assert (run.status, run.stop_clients, run.stop_stage) == (
            "partial",
            2,
            "level c=2 repeat=1 version=14",
        )
        assert "division by zero" in run.stop_reason
        assert [(r.clients, r.aborted) for r in run.results.all()] == [(1, False)]
    page = client.get(f"/runs/{runs['14'].uuid}/").content.decode()
    assert "Partial run: the sweep stopped at 2 clients" in page
    wait_for(
        lambda: LevelAggregate.objects.filter(run__job=job).count() == 2,
        timeout_s=60,
        what="aggregates from the worker",
    )
    comparison = comparison_get(
        workload="select-only-failing-at-2",
        host="e2e-host",
        versions=[runs["13"].build.version, runs["14"].build.version],
    )
    assert comparison.clients == [1] and len(comparison.partial) == 2
    assert no_postgres_under(work_dir)
