"""The five experiments end to end, at a tiny size: one catalog workload of each of E1..E5 is
queued through the jobs API on versions 13 and 14, the real agent (`benchhub-runner once`, its
own process) runs it on prebuilt servers against gunicorn with a real Celery worker aggregating,
and Chromium reads each experiment page: the versions it names and its numbers, which must be
the aggregates stored.

One stack (server, worker, agent work dir) serves the five jobs, which is faster than five.
Sizes: the catalog_e2e TINY parameters, the entry's first two small levels (one for E2's idle
connections), 2 s per level, no warm-up, one repeat.
"""

import time

import pytest
from rest_framework.test import APIClient

from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.tests.conftest import server, work_dir  # noqa: F401 - the agent e2e fixtures
from benchhub.jobs.tests.test_agent_e2e import finish, no_postgres_under, wait_for
from benchhub.results.models import LevelAggregate, Run, StreamResult
from benchhub.testing import processes
from benchhub.testing.browser import screenshot
from benchhub.workloads.catalog import entry_list
from benchhub.workloads.tests.test_catalog_e2e import tiny_params

pytestmark = pytest.mark.slow

HOST = "e2e-experiments"
VERSIONS = ["13", "14"]
# One representative catalog workload per experiment (compare.experiments.EXPERIMENTS).
ENTRIES = {
    "e1": "e1-pk-lookup",
    "e2": "e2-idle-connections",
    "e3": "e3-key-insert",
    "e4": "e4-write-consume",
    "e5": "e5-read-only",
}


def tiny_request(entry_id: str) -> dict:
    entry = next(e for e in entry_list() if e.id == entry_id)
    levels = 1 if entry_id == "e2-idle-connections" else 2
    return {
        "versions": VERSIONS,
        "workload": {"catalog": entry_id, "params": tiny_params(entry_id)},
        "clients": entry.small_job.clients[:levels],
        "duration_s": 2.0,
        "warmup_s": 0.0,
        "repeats": 1,
    }


def cells(row) -> list[str]:
    return [c.strip() for c in row.locator("td").all_inner_texts()]


def number(text: str) -> str:
    """A table cell's figure without its " n=1" / " 2 s" note."""
    return text.split()[0]


def one_decimal(value: float | None) -> str:
    assert value is not None, "a stored figure is missing"
    return f"{value:,.1f}"


def aggregates(runs: dict[str, Run]) -> dict[tuple[str, int], float | None]:
    """(major, clients) -> the stored median tps."""
    return {
        (major, a.clients): a.tps_median
        for major, run in runs.items()
        for a in LevelAggregate.objects.filter(run=run)
    }


def check_e1(page, runs, job):
    # A sweep has no table of its own: its figure's traces carry the per-level medians.
    traces = page.evaluate(
        "Array.from(document.querySelector('.presentation-plot').data,"
        " t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))"
    )
    stored = aggregates(runs)
    by_version = {}
    for trace in traces:
        for major, run in runs.items():
            if trace["name"].startswith(run.build.version):
                by_version[major] = dict(zip(trace["x"], trace["y"], strict=True))
    assert set(by_version) == {"13", "14"}, traces
    for major in VERSIONS:
        assert by_version[major] == {c: stored[(major, c)] for c in job.clients}


def check_e2(page, runs, job):
    rows = page.locator("#connections-table tbody tr")
    assert rows.count() == len(job.clients)
    stored = aggregates(runs)
    for i, clients in enumerate(job.clients):
        row = cells(rows.nth(i))
        assert row[1] == str(tiny_params("e2-idle-connections")["idle_connections"])
        assert row[2] == str(clients)
        assert row[4] == one_decimal(stored[("13", clients)])
        assert row[5] == one_decimal(stored[("14", clients)])


def check_e3(page, runs, job):
    rows = page.locator("#evidence-table tbody tr")
    assert rows.count() == len(job.clients)
    stored = aggregates(runs)
    for i, clients in enumerate(job.clients):
        row = cells(rows.nth(i))
        # ... clients, then four columns per version: tps, iowait, disk util, disk write.
        assert row[-9] == str(clients)
        assert row[-8] == one_decimal(stored[("13", clients)])
        assert row[-4] == one_decimal(stored[("14", clients)])


def check_e4(page, runs, job):
    rows = page.locator("#streams-table tbody tr")
    assert rows.count() == 2 * len(job.clients)
    seen = set()
    for i in range(rows.count()):
        row = cells(rows.nth(i))
        clients, stream = int(row[1]), row[2]
        for major, tps_cell, rows_cell in (("13", row[4], row[6]), ("14", row[7], row[9])):
            stored = StreamResult.objects.get(
                result__run=runs[major], result__clients=clients, name=stream
            )
            assert number(tps_cell) == one_decimal(stored.tps)
            assert rows_cell == f"{stored.rows_per_s:,.0f}"
        seen.add((clients, stream))
    assert seen == {(c, s) for c in job.clients for s in ("writer", "consumer")}


def check_e5(page, runs, job):
    rows = page.locator("#improvement-table tbody tr")
    assert rows.count() == len(job.clients)
    stored = aggregates(runs)
    for i, clients in enumerate(job.clients):
        row = cells(rows.nth(i))
        old, new = stored[("13", clients)], stored[("14", clients)]
        assert old and new, (clients, old, new)
        assert row[:3] == ["read-only", str(clients), str(job.level_threads[str(clients)])]
        assert row[3:5] == [one_decimal(old), one_decimal(new)]
        assert row[5] == f"{(new - old) / old * 100:.1f}%"


CHECKS = {"e1": check_e1, "e2": check_e2, "e3": check_e3, "e4": check_e4, "e5": check_e5}


def test_it_runs_each_experiment_on_13_and_14_and_shows_the_stored_numbers(
    server,  # noqa: F811
    work_dir,  # noqa: F811
    bob,
    page,
):
    """What only this test proves: each of the published experiments E1..E5 goes from a job
    queued through the API, through a real agent's pgbench runs on two prebuilt majors and the
    worker's aggregation, to its experiment page in a browser, which shows the stored numbers."""
    started = time.monotonic()
    api = APIClient()
    api.force_login(bob)
    jobs = {}
    for experiment, entry_id in ENTRIES.items():
        response = api.post("/api/v1/jobs/", tiny_request(entry_id), format="json")
        assert response.status_code == 201, response.content
        jobs[experiment] = Job.objects.get(pk=response.json()["id"])
    _, token = runner_token_create(host_name=HOST)
    env = processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    for _ in ENTRIES:
        agent = processes.agent_once(env=env)
        output = finish(agent, timeout_s=300)
        assert agent.returncode == 0, output + server.output()[-4000:]
    for experiment, job in jobs.items():
        job.refresh_from_db()
        assert job.state == "done", (experiment, job.failure_stage, job.failure_message)
    wait_for(
        lambda: (
            not Run.objects.filter(job__in=jobs.values(), aggregated_at__isnull=True).exists()
            and Run.objects.filter(job__in=jobs.values()).count() == 2 * len(jobs)
        ),
        timeout_s=120,
        what="every run stored and aggregated by the worker",
    )
    ran = time.monotonic()

    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for experiment, job in jobs.items():
        runs = {r.build.major: r for r in Run.objects.filter(job=job).select_related("build")}
        assert {m: r.server_version.split(".")[0] for m, r in runs.items()} == {
            "13": "13",
            "14": "14",
        }
        assert all(r.workload.catalog_entry == ENTRIES[experiment] for r in runs.values())
        page.goto(f"{server.url}/experiments/{experiment}/?host={HOST}")
        heading = page.inner_text("h1")
        versions = [runs["13"].build.version, runs["14"].build.version]
        assert f"{versions[0]} vs {versions[1]}" in heading, heading
        assert all(v.split(".")[0] in {"13", "14"} for v in versions), versions
        if experiment == "e1":
            page.wait_for_selector(".presentation-plot .main-svg")
        else:
            header = page.inner_text("table.compare thead")
            assert versions[0] in header and versions[1] in header, header
        CHECKS[experiment](page, runs, job)
        screenshot(page, f"experiment-e2e-{experiment}")
    assert errors == []
    assert no_postgres_under(work_dir)
    print(f"jobs run in {ran - started:.0f} s, pages read in {time.monotonic() - ran:.0f} s")
