"""Retention: whole monthly partitions of per-second samples (progress and OS telemetry), raw
outputs, evidence and imported texts are detached and dropped, the verdicts of the runs they
belonged to stay the same, and the run's page and API say what was pruned and when."""

import json
import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from benchhub.regressions.services import run_detect
from benchhub.regressions.tests.series import noisy
from benchhub.results.imports import run_import_outputs
from benchhub.results.models import (
    DetailPruning,
    ProgressSeries,
    ResultEvidence,
    ResultOutput,
    ResultTelemetry,
    Run,
    RunImportText,
)
from benchhub.results.partitions import (
    DETAIL_TABLES,
    month_add,
    month_start,
    partition_list,
    partition_name,
    partitions_ensure,
    retention_apply,
)
from benchhub.results.services import run_aggregate
from benchhub.results.tasks import partitions_maintain
from benchhub.testing.payloads import SELECT_ONLY_OUTPUT, evidence, result, run_payload, telemetry

COMPARE = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4,16.1"


def upload(agent, *, version: str, tps: dict[int, list[float]], **overrides) -> Run:
    """A run whose repeats have 12 progress seconds each (enough for steady-state means drawn
    from the samples), 3 seconds of OS telemetry, a raw output and evidence on every result."""
    payload = run_payload(version=version, host=agent.host_name, clients=tuple(tps),
                          repeats=max(len(v) for v in tps.values()), **overrides)  # fmt: skip
    os_samples = telemetry(iowait_pct=[1.0, 2.0, 3.0])
    payload["results"] = [
        result(c, r, value, samples=12, evidence=evidence(), telemetry=os_samples)
        for c, values in tps.items()
        for r, value in enumerate(values, 1)
    ]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.pk)
    return run


def move_to(runs: list[Run], when) -> None:
    """Date the runs, and their detail rows with them, as if stored at `when`."""
    ids = [r.pk for r in runs]
    Run.objects.filter(pk__in=ids).update(created_at=when)
    for model in (ProgressSeries, ResultEvidence, ResultOutput, ResultTelemetry):
        model.objects.filter(result__run__in=ids).update(created_at=when)
    RunImportText.objects.filter(run__in=ids).update(created_at=when)


def partitions() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = ANY(%s)",
            [list(DETAIL_TABLES)],
        )
        return {name for (name,) in cursor.fetchall()}


@pytest.fixture
def history(agent):
    """Two runs stored eight months ago and one this month."""
    old = [
        upload(agent, version="13.3", tps={1: [100, 104, 108], 4: [400, 410, 420]}),
        upload(agent, version="15.4", tps={1: [200, 206, 210], 4: [401, 409, 421]}),
    ]
    when = timezone.now() - timedelta(days=8 * 31)
    partitions_ensure(first=when)
    move_to(old, when)
    recent = upload(agent, version="16.1", tps={1: [300, 303, 306], 4: [500, 505, 510]})
    return old, recent, month_start(when)


def test_it_drops_whole_months_and_keeps_the_verdicts(anon_client, history):
    old, recent, month = history
    before = anon_client.get(COMPARE)
    assert before.json()["rows"][0]["versions"][1]["verdict"] == "faster"  # worth keeping
    old_parts = {partition_name(t, month) for t in DETAIL_TABLES}
    assert old_parts <= partitions()
    assert partition_name("results_resulttelemetry", month) in old_parts

    call_command("retention", keep_detail_months=3)

    assert not old_parts & partitions()
    current = month_start(timezone.now())
    assert partition_name("results_progressseries", current) in partitions()
    assert {p.name for p in partition_list(table="results_progressseries")} >= {
        "results_progressseries_default",
        partition_name("results_progressseries", month_add(current, 1)),
    }
    assert not ProgressSeries.objects.filter(result__run__in=old).exists()
    assert not ResultEvidence.objects.filter(result__run__in=old).exists()
    assert not ResultOutput.objects.filter(result__run__in=old).exists()
    assert not ResultTelemetry.objects.filter(result__run__in=old).exists()
    assert ProgressSeries.objects.filter(result__run=recent).count() == 6
    assert ResultEvidence.objects.filter(result__run=recent).count() == 6
    assert ResultOutput.objects.filter(result__run=recent).count() == 6
    assert ResultTelemetry.objects.filter(result__run=recent).count() == 6
    # The worker aggregating a pruned run again (a retried task) keeps its stored means.
    for run in old:
        run_aggregate(run_id=run.pk)
    assert verdicts_of(anon_client.get(COMPARE)) == verdicts_of(before)


def test_the_pruned_runs_page_and_api_say_what_was_pruned_and_when(anon_client, history):
    old, recent, month = history
    call_command("retention", keep_detail_months=3)

    # Every month before the three kept, from the oldest partition on, empty ones included.
    cutoff = month_add(month_start(timezone.now()), -3)
    months = [m.month for m in DetailPruning.objects.all()]
    assert (
        months[0] == month
        and months[-1] == month_add(cutoff, -1)
        and len(set(months)) == len(months)
    )
    pruning = DetailPruning.objects.get(month=month)
    assert sorted(pruning.parts) == [
        "evidence and profiles",
        "imported texts",
        "per-second OS telemetry",
        "per-second progress samples",
        "raw pgbench outputs",
    ]
    detail = anon_client.get(f"/api/v1/runs/{old[0].uuid}/").json()
    assert sorted(detail["pruned"]["parts"]) == sorted(pruning.parts)
    assert detail["pruned"]["pruned_at"].startswith(timezone.now().strftime("%Y-%m-%d"))
    assert anon_client.get(f"/api/v1/runs/{recent.uuid}/").json()["pruned"] is None
    page = anon_client.get(f"/runs/{old[0].uuid}/").content.decode()
    assert 'id="pruned"' in page and "per-second progress samples" in page
    assert "raw pgbench outputs" in page and "pgbench output, repeat" not in page
    assert "per-second OS telemetry" in page and 'id="chart-telemetry-1"' not in page
    assert f"{month:%B %Y}" in page
    results = anon_client.get(f"/api/v1/runs/{old[0].uuid}/results/", {"progress": "1"}).json()
    results = results["results"]
    assert [r["progress"] for r in results] == [[]] * 6 and results[0]["tps"] == 100
    assert [r["raw_output"] for r in results] == [""] * 6
    assert [r["telemetry"] for r in results] == [[]] * 6
    page = anon_client.get(f"/runs/{recent.uuid}/").content.decode()
    assert 'id="pruned"' not in page and 'id="chart-telemetry-1"' in page


def imported(bob, *, tps: float) -> Run:
    text = SELECT_ONLY_OUTPUT.format(clients=4, transactions=8201, tps=tps, latency=0.975)
    run = run_import_outputs(
        texts=[("c4.txt", text)], version="16.1", host="old-box", config_text="", lscpu="", user=bob
    )
    run_aggregate(run_id=run.pk)
    return run


def test_it_drops_the_texts_imported_runs_were_read_from_with_their_month(anon_client, bob):
    old, recent = imported(bob, tps=4100.5), imported(bob, tps=4200.5)
    when = timezone.now() - timedelta(days=8 * 31)
    partitions_ensure(first=when)
    move_to([old], when)
    assert "tps = 4100.5" in anon_client.get(f"/api/v1/runs/{old.uuid}/").json()["import_text"]
    assert 'id="import-text"' in anon_client.get(f"/runs/{old.uuid}/").content.decode()
    assert partition_name("results_runimporttext", month_start(when)) in partitions()

    retention_apply(keep_months=3)

    assert list(RunImportText.objects.values_list("run", flat=True)) == [recent.pk]
    detail = anon_client.get(f"/api/v1/runs/{old.uuid}/").json()
    assert detail["import_text"] == "" and "imported texts" in detail["pruned"]["parts"]
    assert detail["aggregates"][0]["tps_median"] == 4100.5  # the run and its figures stay
    page = anon_client.get(f"/runs/{old.uuid}/").content.decode()
    assert 'id="pruned"' in page and "imported texts" in page and 'id="import-text"' not in page
    detail = anon_client.get(f"/api/v1/runs/{recent.uuid}/").json()
    assert "tps = 4200.5" in detail["import_text"] and detail["pruned"] is None


def test_it_keeps_everything_within_the_months_asked(history):
    before = partitions()
    call_command("retention", keep_detail_months=12)
    assert partitions() == before and not DetailPruning.objects.exists()


def test_it_refuses_a_negative_number_of_months(db):
    with pytest.raises(CommandError, match="--keep-detail-months"):
        call_command("retention", keep_detail_months=-1)


def test_beats_task_creates_the_coming_months_and_applies_the_setting(history, settings):
    old, _recent, month = history
    ahead = partition_name("results_resultevidence", month_add(month_start(timezone.now()), 3))
    with connection.cursor() as cursor:  # as if the months ahead had not been created yet
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"DROP TABLE IF EXISTS {ahead}")
    settings.BENCHHUB_KEEP_DETAIL_MONTHS = None
    assert partitions_maintain() == 0
    assert ahead in partitions() and not DetailPruning.objects.exists()

    settings.BENCHHUB_KEEP_DETAIL_MONTHS = 3
    assert partitions_maintain() >= 1

    assert DetailPruning.objects.filter(month=month).exists()
    assert not ProgressSeries.objects.filter(result__run__in=old).exists()


# The percentiles of the agents' sampled transaction logs: evidence, which retention drops.
LATENCY_PERCENTILES = ("latency_p50_ms", "latency_p90_ms", "latency_p99_ms")
PERCENTILES_HTML = (
    rb'<figure class="chart" id="percentiles">.*?</figure>',
    rb'<script id="percentiles-figure" type="application/json">.*?</script>',
)


def verdicts_of(response) -> bytes:
    """A page or API answer without the comparison's evidence: its why section (the page's
    section, the compare API's "why") and the latency percentiles of the sampled transaction
    logs (per level in the API, a chart on the page), detail that retention drops by design."""
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        if isinstance(body, dict) and "why" in body:
            body["why"] = None
        for row in body.get("rows") or [] if isinstance(body, dict) else []:
            for cell in row.get("versions") or []:
                for name in LATENCY_PERCENTILES:
                    cell.pop(name, None)
        return json.dumps(body, sort_keys=True).encode()
    content = re.sub(rb'<section class="why".*?</section>', b"", response.content, flags=re.S)
    for pattern in PERCENTILES_HTML:
        content = re.sub(pattern, b"", content, flags=re.S)
    return content


def test_a_history_over_months_answers_the_same_verdicts_after_retention(anon_client, agent):
    """Fourteen runs a month apart (a step down after the eighth): the comparison, History and
    the regression found answer the same once every month but the last three lost its detail."""
    values = noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2)
    runs = [
        upload(agent, version=f"14.{i}", tps={4: [value, value + 2, value - 2]},
               started_at=f"2026-10-{i:02d}T10:00:00Z")
        for i, value in enumerate(values, start=1)
    ]  # fmt: skip
    now = timezone.now()
    partitions_ensure(first=month_add(month_start(now), -len(runs)))
    for age, run in enumerate(reversed(runs)):  # the newest this month, then a month each
        move_to([run], now - timedelta(days=31 * age))
    assert run_detect(run_id=runs[-1].pk) == 1
    compare = "/api/v1/compare/?workload=select-only&host=bench-01&versions=14.1,14.8,14.9,14.14"
    history = "/history/?host=bench-01&workload=select-only&clients=4"
    pages = (compare, history, "/compare/" + compare.removeprefix("/api/v1/compare/"),
             "/api/v1/regressions/", "/regressions/")  # fmt: skip
    before = {url: anon_client.get(url) for url in pages}
    assert all(response.status_code == 200 for response in before.values())
    verdicts = [v["verdict"] for v in before[compare].json()["rows"][0]["versions"][1:]]
    assert verdicts[1:] == ["slower", "slower"], verdicts
    [regression] = before["/api/v1/regressions/"].json()["results"]
    assert regression["kind"] == "regression"

    months = retention_apply(keep_months=3)

    assert len(months) >= len(runs) - 4
    for url, response in before.items():
        assert verdicts_of(anon_client.get(url)) == verdicts_of(response), url
    oldest = anon_client.get(f"/api/v1/runs/{runs[0].uuid}/").json()
    assert {"raw pgbench outputs", "per-second OS telemetry"} <= set(oldest["pruned"]["parts"])
    assert anon_client.get(f"/api/v1/runs/{runs[-1].uuid}/").json()["pruned"] is None
    for model in (ResultOutput, ResultTelemetry):
        assert not model.objects.filter(result__run=runs[0]).exists()
        assert model.objects.filter(result__run=runs[-1]).exists()
