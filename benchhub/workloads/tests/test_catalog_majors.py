"""Every catalog entry is valid for every major it says it supports: its setup SQL for the server,
its scripts (as the agent rewrites them for that pgbench) and the agent's command line for that
pgbench, checked against the table of what each major accepts
(benchhub_runner.servers.capabilities).

Pure code: no server runs. Real servers 10 to 18 run the entries in test_catalog_e2e.py.
"""

from pathlib import Path

import pytest
from benchhub_runner.jobspec.workload import workload_parse
from benchhub_runner.measure import pgbench
from benchhub_runner.measure.level import stream_measurement
from benchhub_runner.measure.streams import workload_streams
from benchhub_runner.servers import capabilities
from benchhub_runner.servers.capabilities import MAJORS, label
from benchhub_runner.servers.versions import version_parse

from benchhub.workloads.catalog import catalog_expand, entry_list

TARGET = pgbench.Target(host="/run/benchhub", port=5432, user="bench", dbname="bench")


def _variants(entry) -> list[tuple[str, dict, bool]]:
    """The entry's small and published sizes, and each value of each choice parameter (with
    the first value of another choice parameter it goes with, where the entry ties them)."""
    variants: list[tuple[str, dict, bool]] = [("small", {}, False)]
    if entry.published_job is not None:
        variants.append(("published", {}, True))
    choices = [p for p in entry.params if p.choices]
    for param in choices:
        for choice in param.choices:
            partners = [{o.name: c} for o in choices if o is not param for c in o.choices]
            params = next(
                p
                for p in [{}, *partners]
                if not entry.check({**entry.defaults(), **p, param.name: choice})
            )
            variants.append((f"{param.name}={choice}", {**params, param.name: choice}, False))
    return variants


def _supported(entry) -> list[tuple[int, int]]:
    parsed = version_parse(entry.min_major)
    head, _, tail = parsed.major.partition(".")
    return [m for m in MAJORS if m >= (int(head), int(tail or 0))]


CASES = [
    (entry.id, name, params, published, major)
    for entry in entry_list()
    for name, params, published in _variants(entry)
    for major in _supported(entry)
]


def _problems(workload: dict, major: tuple[int, int]) -> list[str]:
    parsed = workload_parse(workload)
    problems = []
    for sql in (*parsed.setup, *parsed.level_setup):
        problems += capabilities.sql_problems(sql, major)
    for stream in workload_streams(parsed):
        scripts = []
        for number, script in enumerate(stream.scripts, 1):
            if script.builtin:
                continue
            # What the agent writes to the script file for this pgbench.
            body = pgbench.script_for_client(script.body, major)
            problems += capabilities.script_problems(body, major)
            problems += capabilities.sql_problems(body, major)
            scripts.append((Path(f"script-{number}.sql"), script.weight))
        measurement = stream_measurement(
            parsed,
            stream,
            clients=8,
            threads=8,
            scripts=scripts,
            duration_s=60,
            transactions_per_client=None,
            quiet=not stream.measured,
        )
        try:
            argv = pgbench.argv(bindir=Path("/x"), target=TARGET, m=measurement, version=major)
        except pgbench.PgbenchError as exc:
            problems.append(str(exc))
            continue
        problems += capabilities.option_problems(argv, major)
    return problems


def test_it_walks_every_entry_on_every_supported_major():
    assert {c[0] for c in CASES} == {e.id for e in entry_list()}
    assert any(c[4] == (9, 2) for c in CASES)  # the oldest major is walked


@pytest.mark.parametrize(
    ("entry_id", "variant", "params", "published", "major"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{label(c[4])}" for c in CASES],
)
def test_every_entry_is_valid_for_every_major_it_supports(
    entry_id, variant, params, published, major
):
    expansion = catalog_expand(entry_id=entry_id, params=params, published=published)
    assert _problems(expansion.workload, major) == []


@pytest.mark.parametrize(
    ("workload", "major", "problem"),
    [
        (
            {"name": "p", "builtin": "select-only", "progress_s": 1, "options": ["--rate=100"]},
            (9, 3),
            "pgbench 9.3 has no --rate (since 9.4)",
        ),
        (
            {"name": "s", "scripts": [{"name": "s", "weight": 1, "body": "\\if :x\n\\endif\n"}]},
            (10, 0),
            "pgbench 10 does not read \\if (since 11)",
        ),
        (
            {"name": "b", "setup": ["CREATE INDEX ON t USING brin (id)"], "builtin": "tpcb-like"},
            (9, 4),
            "PostgreSQL 9.4 has no BRIN indexes (since 9.5)",
        ),
    ],
)
def test_the_walk_finds_what_a_major_lacks(workload, major, problem):
    assert problem in _problems(workload, major)


def test_the_agent_passes_no_progress_option_to_pgbench_before_9_4():
    m = pgbench.Measurement(clients=1, threads=1, duration_s=5, builtin="select-only")
    assert "-P" not in pgbench.argv(bindir=Path("/x"), target=TARGET, m=m, version=(9, 3))
    assert "-P" in pgbench.argv(bindir=Path("/x"), target=TARGET, m=m, version=(9, 4))
