"""The experiments' presentations computed from runs with known numbers."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchhub.compare.experiments import model_name
from benchhub.compare.presentations import (
    connections_table,
    evidence_table,
    improvement_table,
    presentation_tables,
    progress_lines,
    run_ids,
    stream_table,
)
from benchhub.compare.selectors import (
    ComparisonError,
    comparison_get,
    experiment_get,
    experiment_index,
    level_threads,
    presentation_read,
    progress_read,
    stream_values,
    telemetry_means,
)
from benchhub.compare.tests.experiment_data import (
    e2_idle_upload,
    e2_sweep_upload,
    e3_upload,
    e3_workload,
    e4_upload,
    e5_upload,
)
from benchhub.results.models import Run


def _e5(agent):
    for entry, factor in (("e5-read-only", 1.0), ("e5-tpcb-like", 0.1)):
        e5_upload(agent, entry=entry, version="13.3", tps={52: [1000 * factor, 1100 * factor]})
        e5_upload(
            agent,
            entry=entry,
            version="14beta1",
            tps={52: [1200 * factor, 1300 * factor], 208: [2000 * factor]},
        )


def test_it_builds_the_improvement_table_of_both_e5_models(agent):
    _e5(agent)
    results = experiment_get(experiment="e5", host="bench-01", versions=["13.3", "14beta1"])
    assert [c.series[0].run.workload.name for c in results.comparisons] == [
        "e5-read-only",
        "e5-tpcb-like",
    ]
    comparisons = results.comparisons
    table = improvement_table(comparisons, level_threads(run_ids(comparisons)))
    assert (table.old, table.new) == ("13.3", ["14beta1"])
    rows = [
        (r.model, r.connections, r.threads, r.old, r.new[0].tps, r.new[0].improvement_pct)
        for r in table.rows
    ]
    assert rows == [
        ("read-only", 52, "52", 1050.0, 1250.0, pytest.approx(100 * 200 / 1050)),
        ("read-only", 208, "104", None, 2000.0, None),
        ("tpcb-like", 52, "52", 105.0, 125.0, pytest.approx(100 * 20 / 105)),
        ("tpcb-like", 208, "104", None, 200.0, None),
    ]
    # 13.3 has no 208-client level, so its runs used fewer distinct thread counts
    assert [d.name for d in results.differences] == ["threads"]


def test_it_finds_each_models_runs_of_a_bare_majors_series(agent):
    _e5(agent)
    results = experiment_get(experiment="e5", host="bench-01", versions=["13", "14"])
    assert [[s.label for s in c.series] for c in results.comparisons] == [
        ["13.3", "14beta1"],
        ["13.3", "14beta1"],
    ]
    assert (results.versions, results.missing) == (["13", "14"], [])


def test_it_calls_a_catalog_model_by_its_published_name(agent):
    run = e5_upload(agent, entry="e5-tpcb-like", version="13.3", tps={52: [100]})
    assert model_name(run.workload) == "tpcb-like"


def test_it_leaves_out_invalid_runs_and_reports_missing_versions_of_an_experiment(agent):
    _e5(agent)
    Run.objects.filter(build__version="14beta1").update(invalid=True)
    results = experiment_get(experiment="e5", host="bench-01", versions=["13.3", "14beta1"])
    assert results.missing == ["14beta1"]
    assert [len(c.series) for c in results.comparisons] == [1, 1]
    with pytest.raises(ComparisonError) as unknown:
        experiment_get(experiment="e9", host="bench-01", versions=["13.3"])
    assert unknown.value.field == "experiment"


def test_it_shows_each_stream_with_rows_per_second_leaving_out_aborted_repeats(agent):
    e4_upload(agent, version="10.1", writer=[1900, 2000, 2100], consumer=[4000, 4200, 4400])
    e4_upload(agent, version="11.1", writer=[2200, 2400], consumer=[4300, 4500], aborted=True)
    results = experiment_get(experiment="e4", host="bench-01", versions=["10.1", "11.1"])
    comparisons = results.comparisons
    table = stream_table(comparisons, stream_values(run_ids(comparisons)))
    assert table.labels == ["10.1", "11.1"]
    rows = {r.stream: r for r in table.rows}
    assert list(rows) == ["writer", "consumer"]  # the workload's order
    writer = rows["writer"].cells
    assert (writer[0].tps, writer[0].rows_per_s, writer[0].latency_ms) == (2000, 2_000_000, 14.0)
    assert (writer[1].tps, writer[1].samples) == (2300, 2)  # the aborted repeat is left out
    assert rows["consumer"].cells[1].rows_per_s == 4_400_000
    assert rows["consumer"].rows_per_transaction == 1000


def test_it_counts_idle_and_measured_connections(agent):
    e2_idle_upload(agent, version="13.3", tps=[100, 120, 110], established=[9000, 8990, 9000])
    e2_idle_upload(agent, version="14beta1", tps=[300, 310, 320], established=[9000] * 3)
    e2_sweep_upload(agent, version="13.3", tps={64: 500, 128: 600})
    e2_sweep_upload(agent, version="14beta1", tps={64: 520, 128: 900})
    results = experiment_get(experiment="e2", host="bench-01", versions=["13.3", "14beta1"])
    comparisons = results.comparisons
    table = connections_table(comparisons, stream_values(run_ids(comparisons)))
    rows = [
        (r.workload, r.idle, r.clients, r.connections, [c.tps for c in r.cells]) for r in table.rows
    ]
    assert rows == [
        ("e2-idle-connections", 9000, 128, 9128, [110, 310]),
        ("e2-connection-sweep", 0, 64, 64, [500, 520]),
        ("e2-connection-sweep", 0, 128, 128, [600, 900]),
    ]
    assert table.rows[2].cells[1].change_pct == pytest.approx(50.0)
    assert [(lim.max_connections, lim.nofile_soft) for lim in table.limits] == [(11000, 65536)] * 4


def test_it_charts_the_progress_of_the_median_repeat_of_the_level(agent):
    e2_idle_upload(agent, version="13.3", tps=[100, 120, 110], established=[9000] * 3)
    e2_idle_upload(agent, version="14beta1", tps=[300, 320], established=[9000] * 2)
    comparison = comparison_get(
        workload="e2-idle-connections", host="bench-01", versions=["13.3", "14beta1"]
    )
    with CaptureQueriesContext(connection) as queries:
        read = progress_read([comparison])
    assert len(queries) == 2
    (chart,) = progress_lines([comparison], read)
    assert (chart.clients, chart.interval_s) == (128, 2)
    assert [(line.label, line.repeat, line.t, line.tps) for line in chart.lines] == [
        ("13.3", 3, [2.0, 4.0, 6.0], [112.0, 114.0, 116.0]),
        ("14beta1", 1, [2.0, 4.0, 6.0], [302.0, 304.0, 306.0]),  # lower middle of two
    ]


def test_it_puts_the_os_evidence_beside_the_tps_of_each_variant(agent):
    uuid_full = e3_workload("uuid", 50_000_000)
    int8_full = e3_workload("int8", 50_000_000)
    e3_upload(
        agent,
        version="9.2.4",
        workload=uuid_full,
        tps=[3400, 3600],
        iowait=[[20, 30], [40]],
        aborted_iowait=[99, 99, 99],
    )
    e3_upload(agent, version="9.2.4", workload=int8_full, tps=[76000], iowait=[[1, 2]])
    results = experiment_get(experiment="e3", host="bench-01", versions=["9.2.4"])
    comparisons = results.comparisons
    table = evidence_table(comparisons, telemetry_means(run_ids(comparisons)))
    assert table.params == ["key_type", "prefill_rows", "storage", "index"]
    by_key = {r.params[0]: r for r in table.rows}
    uuid_cell = by_key["uuid"].cells[0]
    # every sample of the valid repeats; the aborted repeat's 99 % never counts
    assert uuid_cell.tps == 3500
    assert uuid_cell.iowait_pct == pytest.approx(30.0)
    assert uuid_cell.samples == 3
    assert uuid_cell.disk_util_pct == pytest.approx((10 + 10 + 20) / 3)
    assert uuid_cell.disk_write_mb_s == pytest.approx(2.0)
    assert by_key["int8"].cells[0].iowait_pct == pytest.approx(1.5)
    assert by_key["uuid"].params == ["uuid", "50000000", "plain", "True"]


def test_it_adds_a_bounded_number_of_queries_for_the_presentation(agent):
    _e5(agent)
    for version in ("15.1", "16.1"):
        for entry in ("e5-read-only", "e5-tpcb-like"):
            e5_upload(agent, entry=entry, version=version, tps={52: [1], 208: [2], 512: [3]})
    versions = ["13.3", "14beta1", "15.1", "16.1"]
    with CaptureQueriesContext(connection) as queries:
        results = experiment_get(experiment="e5", host="bench-01", versions=versions)
        read = presentation_read(results.comparisons)
    with CaptureQueriesContext(connection) as building:
        tables = presentation_tables(results.comparisons, read)
    assert len(building) == 0  # the builders take what the selectors read
    assert len(tables["improvement"].rows) == 6
    assert len(queries) == 5  # host, runs, aggregates, threads; the table's threads


def test_it_lists_what_has_been_run_in_the_index(agent, other_agent):
    _e5(agent)
    e4_upload(agent, version="10.1", writer=[1], consumer=[1])
    index = experiment_index()
    assert [(r.host, r.versions, r.workloads) for r in index["e5"]] == [
        ("bench-01", ["13.3", "14beta1"], ["e5-read-only", "e5-tpcb-like"])
    ]
    assert [r.versions for r in index["e4"]] == [["10.1"]]
    assert index["e1"] == []
