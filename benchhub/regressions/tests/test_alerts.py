"""Alerts as people triage them: the changes on one host between the same two builds filed as
one alert group across levels and workloads, `mixed` when they go both ways; and a slow drift
over weeks stored as an alert of its own."""

from datetime import UTC, datetime, timedelta

import pytest

from benchhub.compare.tests.uploads import upload
from benchhub.regressions import detection
from benchhub.regressions.corpus import corpus_load
from benchhub.regressions.detection import CONFIRM
from benchhub.regressions.models import AlertGroup, Regression
from benchhub.regressions.selectors import group_list
from benchhub.regressions.services import notify_enqueue, run_detect, series_detect
from benchhub.regressions.tests.series import noisy

START = datetime(2026, 6, 1, 10, tzinfo=UTC)


def _levels(agent, by_level: dict[int, list[float]], **overrides) -> list:
    """One run a day per index, each with one repeat at each level given."""
    count = len(next(iter(by_level.values())))
    return [
        upload(
            agent,
            version=f"14.{i + 1}",
            tps={c: [values[i]] for c, values in by_level.items()},
            started_at=(START + timedelta(days=i)).isoformat(),
            **overrides,
        )
        for i in range(count)
    ]


def test_it_files_the_changes_of_one_commit_range_on_one_host_as_one_mixed_alert(
    agent, anon_client
):
    # At 1 client 14.9 loses 20%; at 4 clients it gains 20%: one commit range, one host.
    runs = _levels(
        agent,
        {
            1: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2),
            4: noisy(3000.0, 8, seed=3) + noisy(3600.0, 6, seed=4),
        },
    )
    assert run_detect(run_id=runs[-1].pk) == 2
    (group,) = AlertGroup.objects.all()
    assert group.direction == "mixed" and group.members == 2
    assert (group.build_before, group.build_after) == (runs[7].build, runs[8].build)
    assert group.worst_change == pytest.approx(0.2, abs=0.02)
    kinds = {r.clients: r.kind for r in Regression.objects.filter(group=group)}
    assert kinds == {1: "regression", 4: "improvement"}
    body = anon_client.get(f"/api/v1/regressions/?group={group.pk}").json()
    assert {r["group"]["direction"] for r in body["results"]} == {"mixed"}
    assert len(body["results"]) == 2
    page = anon_client.get(f"/regressions/?group={group.pk}").content.decode()
    assert f"#{group.pk} mixed, 2 changes" in page


def test_it_keeps_one_direction_when_every_member_went_the_same_way(agent):
    runs = _levels(
        agent,
        {
            1: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2),
            4: noisy(3000.0, 8, seed=3) + noisy(2500.0, 6, seed=4),
        },
    )
    run_detect(run_id=runs[-1].pk)
    (group,) = AlertGroup.objects.all()
    assert group.direction == "regression" and group.members == 2


def test_it_files_changes_of_other_commit_ranges_or_hosts_apart(agent, other_agent):
    here = _levels(agent, {4: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2)})
    # Another host's series steps at another place: another alert.
    there = _levels(other_agent, {4: noisy(1000.0, 5, seed=5) + noisy(800.0, 9, seed=6)})
    run_detect(run_id=here[-1].pk)
    run_detect(run_id=there[-1].pk)
    groups = AlertGroup.objects.order_by("host__name")
    assert [(g.host.name, g.members) for g in groups] == [("bench-01", 1), ("bench-02", 1)]


def test_it_lists_one_row_per_alert_on_the_page_and_in_the_api(
    agent, other_agent, anon_client, django_assert_num_queries
):
    here = _levels(
        agent,
        {
            1: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2),
            4: noisy(3000.0, 8, seed=3) + noisy(3600.0, 6, seed=4),
        },
    )
    there = _levels(other_agent, {4: noisy(1000.0, 5, seed=5) + noisy(800.0, 9, seed=6)})
    run_detect(run_id=here[-1].pk)
    run_detect(run_id=there[-1].pk)
    Regression.objects.filter(host__name="bench-01", clients=1).update(state="investigating")
    with django_assert_num_queries(1):  # the groups, their host and builds, and the count
        groups = list(group_list()[:200])
    assert len(groups) == 2

    body = anon_client.get("/api/v1/regressions/groups/").json()
    rows = {(g["host"], g["build_after"]["version"]): g for g in body["results"]}
    assert set(rows) == {("bench-01", "14.9"), ("bench-02", "14.6")}
    mixed = rows[("bench-01", "14.9")]
    assert (mixed["direction"], mixed["members"], mixed["untriaged"]) == ("mixed", 2, 1)
    assert mixed["build_before"]["version"] == "14.8"
    assert mixed["worst_change"] == pytest.approx(0.2, abs=0.02)
    only = anon_client.get("/api/v1/regressions/groups/?host=bench-02&direction=regression")
    assert [g["host"] for g in only.json()["results"]] == ["bench-02"]
    refused = anon_client.get("/api/v1/regressions/groups/?direction=sideways")
    assert refused.status_code == 400 and "direction" in refused.json()["fields"]

    page = anon_client.get("/regressions/groups/").content.decode()
    assert page.count('<tr data-group="') == 2
    assert f'href="/regressions/?group={mixed["id"]}"' in page and "14.8 → 14.9" in page
    assert anon_client.get("/regressions/groups/?direction=sideways").status_code == 400


def _corpus_series(name: str) -> list[float]:
    (series,) = [s for s in corpus_load() if s.name == name]
    return series.values


def test_it_flags_the_corpus_series_that_loses_half_a_percent_a_week(agent, anon_client):
    runs = _levels(agent, {4: _corpus_series("drift-0.50%-1%-0")})
    run_detect(run_id=runs[-1].pk)
    (drift,) = Regression.objects.filter(kind="drift")
    assert drift.per_week == pytest.approx(-0.005, abs=0.002)
    assert drift.change < -0.03 and drift.change_low < drift.change < drift.change_high
    assert drift.run_after == runs[-1] and drift.group is None
    # Detected again after the next runs, it is the same alert, its window moved on.
    more = [
        upload(
            agent,
            version=f"14.{101 + i}",
            tps={4: [drift.after_tps * 0.999]},
            started_at=(START + timedelta(days=100 + i)).isoformat(),
        )
        for i in range(2)
    ]
    run_detect(run_id=more[-1].pk)
    (again,) = Regression.objects.filter(kind="drift")
    assert again.pk == drift.pk and again.run_after == more[-1]
    body = anon_client.get("/api/v1/regressions/?kind=drift").json()
    assert [r["per_week"] for r in body["results"]] == [pytest.approx(again.per_week)]
    assert "drift" in anon_client.get("/regressions/?kind=drift").content.decode()


def test_it_flags_no_drift_in_a_flat_corpus_series(agent):
    runs = _levels(agent, {4: _corpus_series("flat-1%-0")})
    series_detect(comparability_key=runs[-1].comparability_key, clients=4, host_id=runs[-1].host_id)
    assert not Regression.objects.filter(kind="drift").exists()


def _notified(callbacks) -> list[int]:
    return [
        c.keywords["regression_id"] for c in callbacks if getattr(c, "func", None) is notify_enqueue
    ]


def test_it_tells_subscribers_once_the_next_detections_find_the_change_again(
    agent, django_capture_on_commit_callbacks
):
    runs = _levels(agent, {4: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2)})
    key, host = runs[-1].comparability_key, runs[-1].host_id
    sent = []
    for _ in range(CONFIRM + 1):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            series_detect(comparability_key=key, clients=4, host_id=host)
        sent.append(_notified(callbacks))
    regression = Regression.objects.get(kind="regression")
    # Found by each detection; sent once, by the CONFIRMth.
    assert regression.detections == CONFIRM + 1
    assert sent == [[]] * (CONFIRM - 1) + [[regression.pk], []]


def test_it_lists_but_does_not_send_a_change_the_windowed_test_does_not_bear_out(
    agent, django_capture_on_commit_callbacks, monkeypatch
):
    runs = _levels(agent, {4: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2)})
    key, host = runs[-1].comparability_key, runs[-1].host_id
    # No p is under 0: the windowed test never agrees.
    monkeypatch.setattr(detection, "WINDOW_P", 0.0)
    sent = []
    for _ in range(CONFIRM + 1):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            series_detect(comparability_key=key, clients=4, host_id=host)
        sent.extend(_notified(callbacks))
    regression = Regression.objects.get(kind="regression")
    assert regression.detections == 0
    assert sent == []
    # Once it agrees, the detections count again and the change is sent at the CONFIRMth.
    monkeypatch.setattr(detection, "WINDOW_P", 0.01)
    for _ in range(CONFIRM):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            series_detect(comparability_key=key, clients=4, host_id=host)
        sent.extend(_notified(callbacks))
    assert sent == [regression.pk]


def test_it_tells_nobody_of_what_a_backfill_finds_when_it_is_found_again(
    agent, django_capture_on_commit_callbacks
):
    runs = _levels(agent, {4: noisy(1000.0, 8, seed=1) + noisy(800.0, 6, seed=2)})
    key, host = runs[-1].comparability_key, runs[-1].host_id
    series_detect(comparability_key=key, clients=4, host_id=host, notify=False)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        series_detect(comparability_key=key, clients=4, host_id=host)
    assert _notified(callbacks) == []
