"""The order of a job's measurements, and the pgbench command lines the agent builds."""

from pathlib import Path
from typing import Any

import pytest

from benchhub_runner.job.steps import Step, plan
from benchhub_runner.jobspec.spec import JobSpec, JobSpecError, job_parse
from benchhub_runner.measure import pgbench

JOB = {
    "id": 1,
    "attempt": 1,
    "versions": ["13", "14"],
    "workload": {"name": "so", "builtin": "select-only"},
    "clients": [1, 4],
    "repeats": 2,
    "duration_s": 10,
}


def job(**fields: Any) -> JobSpec:
    return job_parse({**JOB, **fields})


def test_it_interleaves_versions_per_level_and_repeat_by_default():
    assert plan(job())[:4] == [
        Step("13", 1, 1, 0),
        Step("14", 1, 1, 1),
        Step("13", 1, 2, 0),
        Step("14", 1, 2, 1),
    ]
    assert len(plan(job())) == 8


def test_it_keeps_the_two_series_of_an_a_a_job_apart():
    steps = plan(job(versions=["14", "14"]))
    assert [(s.version, s.series) for s in steps[:2]] == [("14", 0), ("14", 1)]
    assert len(steps) == 8


def test_it_runs_one_version_after_the_other_when_asked():
    steps = plan(job(order="sequential"))
    assert [s.version for s in steps] == ["13"] * 4 + ["14"] * 4


def test_fixed_threads_never_exceed_clients():
    fixed = job(threads_policy="fixed", threads=16, clients=[4, 64])
    assert (fixed.threads_for(4), fixed.threads_for(64)) == (4, 16)
    assert job(threads_policy="clients", clients=[64]).threads_for(64) == 64
    pairs = job(threads_policy="pairs", clients=[52, 208], level_threads={"52": 52, "208": 104})
    assert (pairs.threads_for(52), pairs.threads_for(208)) == (52, 104)


def test_scripts_follow_the_syntax_of_the_client():
    body = "\\set id random(1, 100000000)\nSELECT * FROM t WHERE id = :id;"
    old = pgbench.script_for_client(body, (9, 5))
    assert old.splitlines()[0] == "\\setrandom id 1 100000000"
    assert pgbench.script_for_client(old, (15, 4)).splitlines()[0] == (
        "\\set id random(1, 100000000)"
    )


def test_builtins_use_the_flags_of_the_client():
    target = pgbench.Target(host="/run/sock", port=5555)
    m = pgbench.Measurement(
        clients=8, threads=8, duration_s=30, builtin="select-only", query_mode="prepared"
    )
    new = pgbench.argv(bindir=Path("/pg"), target=target, m=m, version=(15, 4))
    old = pgbench.argv(bindir=Path("/pg"), target=target, m=m, version=(9, 5))
    assert new[new.index("-b") : new.index("-b") + 2] == ["-b", "select-only"]
    assert "-S" in old and "-b" not in old
    assert new[-1] == "postgres" and new[new.index("-T") : new.index("-T") + 2] == ["-T", "30"]
    assert new[new.index("-P") : new.index("-P") + 2] == ["-P", "1"] and "-r" in new


def test_it_passes_every_weighted_builtin_and_script():
    target = pgbench.Target(host="/run/sock", port=5555)
    m = pgbench.Measurement(
        clients=4,
        threads=2,
        duration_s=10,
        builtin="tpcb-like",
        builtins=[("select-only", 9), ("simple-update", 1)],
        scripts=[(Path("/w/a.sql"), 3)],
    )
    args = pgbench.argv(bindir=Path("/pg"), target=target, m=m, version=(14, 0))
    flags = [(a, args[i + 1]) for i, a in enumerate(args) if a in ("-b", "-f")]
    assert flags == [
        ("-b", "tpcb-like"),
        ("-b", "select-only@9"),
        ("-b", "simple-update@1"),
        ("-f", "/w/a.sql@3"),
    ]
    with pytest.raises(pgbench.PgbenchError, match=r"9\.6"):
        pgbench.argv(bindir=Path("/pg"), target=target, m=m, version=(9, 5))


def test_it_shuffles_the_levels_per_repeat_from_the_seed():
    levels = list(range(1, 9))
    shuffled = plan(job(clients=levels, repeats=3, level_order="shuffled", shuffle_seed=5))
    again = plan(job(clients=levels, repeats=3, level_order="shuffled", shuffle_seed=5))
    other = plan(job(clients=levels, repeats=3, level_order="shuffled", shuffle_seed=6))

    assert shuffled == again and shuffled != other
    # Repeat by repeat, each repeat every level once, both versions at each step in turn.
    for repeat in (1, 2, 3):
        steps = [s for s in shuffled if s.repeat == repeat]
        assert sorted({s.clients for s in steps}) == levels
    orders = [
        [s.clients for s in shuffled if s.repeat == r and s.version == "13"] for r in (1, 2, 3)
    ]
    assert orders[0] != levels and len({tuple(o) for o in orders}) == 3
    assert [s.version for s in shuffled[:2]] == ["13", "14"]


def test_it_reads_the_measurement_method_with_its_defaults():
    assert job().warmup_s == 2.0  # 10% of 10 s, at least 2 s
    assert job(duration_s=120).warmup_s == 12.0
    assert job(duration_s=1000).warmup_s == 30.0
    assert job(warmup_s=0).warmup_s == 0.0
    assert job(level_order="shuffled").shuffle_seed is not None
    spec = job(level_durations={"4": 30})
    assert (spec.duration_for(1), spec.duration_for(4)) == (10.0, 30.0)


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"level_durations": {"64": 30}}, "level_durations"),
        ({"level_durations": {"4": 0}}, "level_durations.4"),
        ({"level_durations": {"x": 3}}, "level_durations.x"),
        ({"warmup_s": -1}, "warmup_s"),
        ({"level_order": "random"}, "level_order"),
        ({"shuffle_seed": "7"}, "shuffle_seed"),
        (
            {"duration_s": None, "transactions_per_client": 5, "level_durations": {"4": 3}},
            "level_durations",
        ),
    ],
)
def test_it_names_the_method_field_at_fault(fields, path):
    with pytest.raises(JobSpecError) as error:
        job(**fields)
    assert error.value.field == path
