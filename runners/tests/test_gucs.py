"""A job's settings as each major takes them: the plan, without a server (test_cluster.py runs
real servers of 10, 12 and 13 with it)."""

from __future__ import annotations

import pytest

from benchhub_runner.servers.gucs import settings_plan

MODERN = frozenset({"max_wal_size", "min_wal_size", "wal_keep_size", "work_mem", "jit"})
OLD_94 = frozenset({"checkpoint_segments", "wal_keep_segments", "work_mem"})


@pytest.mark.parametrize(
    ("value", "segments"), [("1GB", "22"), ("4096MB", "86"), ("48MB", "1"), ("1", "1")]
)
def test_it_turns_max_wal_size_into_checkpoint_segments_before_9_5(value, segments) -> None:
    plan = settings_plan({"max_wal_size": value}, known=OLD_94, server="PostgreSQL 9.4.26")
    assert plan.applied == {"checkpoint_segments": segments}
    assert plan.translated["max_wal_size"] == (
        f"checkpoint_segments = {segments} (PostgreSQL 9.4.26 has no max_wal_size; "
        "max_wal_size = 3 x checkpoint_segments x 16MB)"
    )


def test_it_turns_checkpoint_segments_into_max_wal_size_from_9_5() -> None:
    plan = settings_plan({"checkpoint_segments": "32"}, known=MODERN, server="PostgreSQL 14.0")
    assert plan.applied == {"max_wal_size": "1536MB"}


def test_it_reports_what_has_no_counterpart_and_keeps_the_rest_in_order() -> None:
    overrides = {"min_wal_size": "1GB", "work_mem": "4MB", "jit": "off", "pg_stat.x": "1"}
    plan = settings_plan(overrides, known=OLD_94, server="PostgreSQL 9.4.26")
    assert list(plan.applied) == ["work_mem", "pg_stat.x"]
    assert plan.not_applied == {
        "min_wal_size": "PostgreSQL 9.4.26 has no setting min_wal_size",
        "jit": "PostgreSQL 9.4.26 has no setting jit",
    }


def test_it_reports_a_value_it_cannot_convert_rather_than_guess() -> None:
    plan = settings_plan({"max_wal_size": "lots"}, known=OLD_94, server="PostgreSQL 9.4.26")
    assert plan.applied == {}
    assert "is not a size" in plan.not_applied["max_wal_size"]


def test_it_refuses_to_set_both_names_of_one_setting() -> None:
    overrides = {"wal_keep_size": "64MB", "wal_keep_segments": "2"}
    plan = settings_plan(overrides, known=OLD_94, server="PostgreSQL 12.22")
    assert plan.applied == {"wal_keep_segments": "2"}
    assert "which the job also sets" in plan.not_applied["wal_keep_size"]


def test_it_asks_about_a_name_the_binary_does_not_list() -> None:
    asked: list[str] = []

    def exists(name: str) -> bool:
        asked.append(name)
        return name == "trace_notify"

    overrides = {"trace_notify": "on", "bogus": "1", "work_mem": "1MB"}
    plan = settings_plan(overrides, known=MODERN, server="PostgreSQL 16.1", exists=exists)
    assert plan.applied == {"trace_notify": "on", "work_mem": "1MB"}
    assert list(plan.not_applied) == ["bogus"]
    assert asked == ["trace_notify", "bogus"]
