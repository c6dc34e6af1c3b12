import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchhub.compare.selectors import ComparisonError, comparison_get, history_get
from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Run

WORKLOAD = "select-only"


def compare(**kwargs):
    return comparison_get(workload=WORKLOAD, host="bench-01", **kwargs)


def test_it_takes_the_newest_valid_run_of_each_version_in_the_order_asked(agent):
    upload(agent, version="13.3", tps={1: [100, 110]}, started_at="2026-11-01T10:00:00Z")
    newest = upload(agent, version="13.3", tps={1: [120, 130]}, started_at="2026-11-02T10:00:00Z")
    v15 = upload(agent, version="15.4", tps={1: [200, 210]})
    comparison = compare(versions=["15.4", "13.3"])
    assert [s.run.id for s in comparison.series] == [v15.id, newest.id]
    # 13.3's figures are those of its set, both of its runs: the median of 100, 110, 120, 130.
    assert comparison.series[1].pooled[0].id == newest.id
    assert len(comparison.series[1].pooled) == 2
    assert comparison.series[1].levels[1].tps_median == pytest.approx(115)


def test_it_leaves_out_runs_marked_invalid_unless_asked(agent):
    older = upload(agent, version="13.3", tps={1: [100, 110]}, started_at="2026-11-01T10:00:00Z")
    bad = upload(agent, version="13.3", tps={1: [1, 2]}, started_at="2026-11-02T10:00:00Z")
    Run.objects.filter(id=bad.id).update(invalid=True)
    assert compare(versions=["13.3"]).series[0].run.id == older.id
    assert compare(versions=["13.3"], include_invalid=True).series[0].run.id == bad.id


def test_it_reports_versions_without_runs_as_missing(agent):
    upload(agent, version="13.3", tps={1: [100]})
    comparison = compare(versions=["13.3", "99.0"])
    assert [s.label for s in comparison.series] == ["13.3"]
    assert comparison.missing == ["99.0"]


def test_it_takes_a_bare_major_for_the_newest_run_of_its_series(agent):
    upload(agent, version="13.2", tps={1: [90]}, started_at="2026-11-01T10:00:00Z")
    v13 = upload(agent, version="13.3", tps={1: [100]}, started_at="2026-11-02T10:00:00Z")
    v14 = upload(agent, version="14beta1", tps={1: [120]})
    upload(agent, version="130.1", tps={1: [1]})  # not in the 13 series
    comparison = compare(versions=["13", "14", "15"])
    assert [s.run.id for s in comparison.series] == [v13.id, v14.id]
    assert [s.label for s in comparison.series] == ["13.3", "14beta1"]
    assert comparison.missing == ["15"]
    # An exact version is still taken exactly.
    assert compare(versions=["13.2"]).series[0].label == "13.2"


def test_a_bare_9x_major_is_its_series_without_the_patched_builds(agent):
    v96 = upload(agent, version="9.6.24", tps={1: [90]}, started_at="2026-11-01T10:00:00Z")
    upload(agent, version="9.6.24+slow-commit", tps={1: [80]}, started_at="2026-11-02T10:00:00Z")
    upload(agent, version="9.5.4", tps={1: [70]}, started_at="2026-11-03T10:00:00Z")
    comparison = compare(versions=["9.6"])
    assert [s.run.id for s in comparison.series] == [v96.id]
    # A patched build is compared by its own name, next to its base.
    both = compare(versions=["9.6.24", "9.6.24+slow-commit"])
    assert [s.label for s in both.series] == ["9.6.24", "9.6.24+slow-commit"]


def test_it_lists_what_differs_besides_the_version(agent):
    upload(agent, version="13.3", tps={1: [100]})
    upload(agent, version="15.4", tps={1: [100]}, scale=10, settings={"shared_buffers": "1GB"})
    comparison = compare(versions=["13.3", "15.4"])
    by_name = {d.name: d for d in comparison.differences}
    assert set(by_name) == {"configuration", "scale"}
    assert by_name["scale"].values == [("13.3", "1"), ("15.4", "10")]
    assert any(
        "shared_buffers = 1GB" in line and "128MB" in line
        for line in by_name["configuration"].details
    )


def test_it_lists_no_differences_for_like_runs(agent):
    upload(agent, version="13.3", tps={1: [100]})
    upload(agent, version="15.4", tps={1: [100]})
    assert compare(versions=["13.3", "15.4"]).differences == []


def test_it_compares_across_hosts_with_the_same_hardware_only_when_asked(agent, other_agent):
    upload(agent, version="13.3", tps={1: [100]})
    upload(other_agent, version="15.4", tps={1: [200]})
    assert compare(versions=["13.3", "15.4"]).missing == ["15.4"]
    comparison = compare(versions=["13.3", "15.4"], same_hardware=True)
    assert [s.run.host.name for s in comparison.series] == ["bench-01", "bench-02"]
    assert [d.name for d in comparison.differences] == ["host"]


def test_it_compares_specific_runs_and_labels_repeated_versions(agent):
    a = upload(agent, version="13.3", tps={1: [100]}, started_at="2026-11-01T10:00:00Z")
    b = upload(agent, version="13.3", tps={1: [120]}, started_at="2026-11-02T10:00:00Z")
    comparison = comparison_get(runs=[b.uuid, a.uuid])
    assert [s.run.id for s in comparison.series] == [b.id, a.id]
    assert comparison.series[0].label == f"13.3 ({str(b.uuid)[:8]})"


def test_it_names_the_missing_parameter_or_unknown_host(agent):
    with pytest.raises(ComparisonError) as missing:
        comparison_get(workload=WORKLOAD, host="bench-01", versions=[])
    assert missing.value.field == "versions"
    with pytest.raises(ComparisonError) as unknown:
        comparison_get(workload=WORKLOAD, host="nope", versions=["13.3"])
    assert unknown.value.field == "host"


def _queries(**kwargs) -> int:
    with CaptureQueriesContext(connection) as ctx:
        comparison_get(**kwargs)
    return len(ctx.captured_queries)


def test_it_makes_the_same_number_of_queries_however_many_runs_are_stored(agent):
    selection = {"workload": WORKLOAD, "host": "bench-01", "versions": ["13.3", "15.4"]}
    upload(agent, version="13.3", tps={1: [100], 2: [150]})
    upload(agent, version="15.4", tps={1: [100], 2: [150]})
    few = _queries(**selection)
    for day in range(1, 10):
        for version in ("13.3", "15.4"):
            upload(
                agent,
                version=version,
                tps={1: [100], 2: [150]},
                started_at=f"2026-10-{day:02d}T10:00:00Z",
            )
    assert Run.objects.count() == 20
    # host, runs, the runs each pools, aggregates, threads
    assert _queries(**selection) == few == 5


def test_it_follows_one_configuration_in_time_order_in_history(agent):
    upload(agent, version="13.3", tps={1: [100, 110]}, started_at="2026-11-01T10:00:00Z")
    upload(agent, version="15.4", tps={1: [200, 210]}, started_at="2026-11-03T10:00:00Z")
    upload(agent, version="14.1", tps={1: [150]}, started_at="2026-11-02T10:00:00Z")
    upload(
        agent,
        version="16.0",
        tps={1: [999]},
        started_at="2026-10-01T10:00:00Z",
        settings={"shared_buffers": "1GB"},
    )
    history = history_get(host="bench-01", workload=WORKLOAD, clients=1)
    assert [p.version for p in history.points] == ["13.3", "14.1", "15.4"]
    assert [p.tps_median for p in history.points] == pytest.approx([105, 150, 205])
    assert len(history.configs) == 2
    other = next(h for h, _ in history.configs if h != history.config_hash)
    assert [
        p.version
        for p in history_get(host="bench-01", workload=WORKLOAD, clients=1, config=other[:8]).points
    ] == ["16.0"]
