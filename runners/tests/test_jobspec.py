"""A claimed job parsed once: the typed job the agent runs, and errors that name the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from benchhub_runner.jobspec.spec import BisectRange, JobSpecError, job_parse
from benchhub_runner.jobspec.workload import Script, Stream

# A claim as the server sends it (JobOutSerializer), including fields the agent ignores.
CLAIM: dict[str, Any] = {
    "id": 7,
    "state": "claimed",
    "versions": ["9.6", "15.18+slow-commit"],
    "workload": {
        "name": "e2-idle",
        "builtin": "",
        "scripts": [],
        "setup": ["CREATE TABLE t (id int)"],
        "query_mode": "prepared",
        "options": ["--no-vacuum"],
        "level_setup": ["TRUNCATE t"],
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "builtin": "",
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
                "clients": 900,
                "threads": 4,
                "per_client": False,
                "rows_per_transaction": None,
            },
            {
                "name": "select-only",
                "role": "measured",
                "builtin": "select-only",
                "scripts": [],
                "clients": None,
                "threads": None,
                "per_client": False,
                "rows_per_transaction": None,
            },
        ],
        "combine": "measured",
        "progress_s": 2,
        "catalog_entry": "e2-idle-connections",
        "params": {"idle_connections": 900},
        "presentation": "connections",
    },
    "scale": 10,
    "clients": [52, 208],
    "threads_policy": "pairs",
    "threads": None,
    "level_threads": {"52": 52, "208": 104},
    "duration_s": 30.0,
    "transactions_per_client": None,
    "repeats": 3,
    "config_overrides": {"max_connections": "11000", "shared_buffers": "1GB"},
    "order": "sequential",
    "host": None,
    "attempt": 2,
    "claimed_host": "bench-01",
    "progress": {},
    "runs": [],
}


def claim(**changes: Any) -> dict[str, Any]:
    """CLAIM with changes; a dotted key ("workload.streams.1.clients") reaches inside."""
    data = copy.deepcopy(CLAIM)
    for path, value in changes.items():
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        if value is DELETE:
            del target[key]
        else:
            target[key] = value
    return data


DELETE = object()


def test_it_reads_every_field_the_agent_runs_on():
    job = job_parse(CLAIM)

    assert (job.id, job.attempt, job.versions) == (7, 2, ("9.6", "15.18+slow-commit"))
    assert (job.clients, job.repeats, job.scale, job.order) == ((52, 208), 3, 10, "sequential")
    assert (job.threads_for(52), job.threads_for(208)) == (52, 104)
    assert (job.duration_s, job.transactions_per_client) == (30.0, None)
    assert job.config_overrides == {"max_connections": "11000", "shared_buffers": "1GB"}
    assert job.claimed_host == "bench-01"
    workload = job.workload
    assert (workload.query_mode, workload.combine, workload.progress_s) == (
        "prepared",
        "measured",
        2,
    )
    assert (workload.setup, workload.level_setup, workload.options) == (
        ("CREATE TABLE t (id int)",),
        ("TRUNCATE t",),
        ("--no-vacuum",),
    )
    idle, measured = workload.streams
    assert idle == Stream(
        name="idle",
        role="background",
        builtin="",
        scripts=(Script(name="idle", weight=1, body="SELECT pg_sleep(2000);"),),
        clients=900,
        threads=4,
        per_client=False,
        rows_per_transaction=None,
    )
    assert measured.measured and measured.level_clients(208) == 208
    # The upload sends the definition back as it came: the server hashes it.
    assert workload.definition == CLAIM["workload"]


def test_it_takes_the_documented_defaults_for_absent_optional_fields():
    job = job_parse(
        {
            "id": 1,
            "attempt": 1,
            "versions": ["13"],
            "workload": {"name": "so", "builtin": "select-only"},
            "clients": [1],
            "repeats": 1,
            "transactions_per_client": 100,
        }
    )
    assert (job.threads_policy, job.order, job.scale, job.config_overrides) == (
        "clients",
        "interleaved",
        None,
        {},
    )
    assert (job.workload.query_mode, job.workload.combine, job.workload.progress_s) == (
        "simple",
        "sum",
        1,
    )
    assert job.workload.streams == () and job.threads_for(8) == 8
    # An older server sends no profile_clients: the profile pass takes the largest level.
    assert job.profile_clients is None


def test_it_reads_the_level_to_profile():
    assert job_parse(claim(profile_clients=52)).profile_clients == 52


def test_it_reads_a_bisections_listing_job():
    listing = {"url": "https://git.postgresql.org/git/postgresql.git", "good": "REL_15_0",
               "bad": "master"}  # fmt: skip
    assert job_parse(claim(bisect_range=listing)).bisect_range == BisectRange(**listing)
    assert job_parse(claim(bisect_range={})).bisect_range is None
    assert job_parse(claim()).bisect_range is None


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"versions": DELETE}, "versions", "is missing"),
        ({"versions": []}, "versions", "is empty"),
        ({"versions": "13"}, "versions", "expected a list"),
        ({"versions.1": "fourteen"}, "versions[1]", "not a PostgreSQL version"),
        ({"attempt": None}, "attempt", "is null"),
        ({"clients.0": True}, "clients[0]", "expected an integer"),
        ({"clients.1": 0}, "clients[1]", "at least 1"),
        ({"repeats": "3"}, "repeats", "expected an integer"),
        ({"duration_s": float("nan")}, "duration_s", "expected a number"),
        ({"transactions_per_client": 10}, "duration_s", "exactly one"),
        ({"threads_policy": "all"}, "threads_policy", "expected one of clients, fixed, pairs"),
        ({"threads_policy": "fixed"}, "threads", "needs threads"),
        ({"level_threads": {"52": 52}}, "level_threads", "no threads for [208]"),
        ({"level_threads": {"x": 1, "52": 52, "208": 1}}, "level_threads.x", "client levels"),
        (
            {"config_overrides.max_connections": "lots"},
            "config_overrides.max_connections",
            "whole number",
        ),
        ({"config_overrides.work_mem": 64}, "config_overrides.work_mem", "expected a string"),
        ({"profile_clients": 7}, "profile_clients", "one of the job's clients"),
        ({"profile_clients": "52"}, "profile_clients", "expected an integer"),
        ({"workload": []}, "workload", "expected an object"),
        (
            {"bisect_range": {"url": "/r", "good": "a..b", "bad": "x"}},
            "bisect_range.good",
            "a commit",
        ),
        ({"bisect_range": {"url": "ftp://r", "good": "a", "bad": "b"}}, "bisect_range.url", "URL"),
        ({"bisect_range": {"url": "/r", "good": "a"}}, "bisect_range.bad", "is missing"),
        ({"workload.name": DELETE}, "workload.name", "is missing"),
        ({"workload.query_mode": "fast"}, "workload.query_mode", "expected one of"),
        ({"workload.streams.1.clients": "x"}, "workload.streams[1].clients", "integer"),
        ({"workload.streams.1.role": "background"}, "workload.streams", "no stream is measured"),
        ({"workload.streams.1.builtin": ""}, "workload.streams[1].builtin", "builtin or scripts"),
        ({"workload.streams.0.per_client": "no"}, "workload.streams[0].per_client", "true or"),
        ({"workload.streams.0.scripts.0.body": ""}, "workload.streams[0].scripts[0]", "a body"),
        ({"workload.setup.0": 1}, "workload.setup[0]", "expected a string"),
        # The name goes into a file name the agent (root) writes: no paths.
        ({"workload.streams.0.name": "../../etc/x"}, "workload.streams[0].name", "letters"),
        ({"workload.streams.0.name": "a/b"}, "workload.streams[0].name", "letters"),
    ],
)
def test_it_names_the_field_the_server_got_wrong(changes, field, says):
    with pytest.raises(JobSpecError) as refused:
        job_parse(claim(**changes))
    assert refused.value.field == field
    assert says in refused.value.message
    assert str(refused.value).startswith(f"{field}: ")
    assert refused.value.job_id == 7, "the failure can be reported for the job"


@pytest.mark.parametrize("body", [None, [], "job", {"id": "7"}, {"versions": ["13"]}])
def test_a_claim_without_a_readable_id_says_so(body):
    with pytest.raises(JobSpecError) as refused:
        job_parse(body)
    assert refused.value.job_id is None
    assert refused.value.field in ("job", "id")


def test_it_ignores_fields_it_does_not_know():
    assert job_parse(claim(priority=5, new_field={"a": 1})) == job_parse(CLAIM)
