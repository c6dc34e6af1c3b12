"""The catalog: every entry expands into a valid definition at both sizes; params are checked
and errors name them; scripts work with every pgbench's syntax."""

import pytest
from benchhub_runner.jobspec.workload import workload_parse
from benchhub_runner.measure.pgbench import script_for_client
from benchhub_runner.measure.streams import connections_peak, max_connections_for
from rest_framework.exceptions import ValidationError

from benchhub.api.errors import flatten_errors
from benchhub.workloads.catalog import (
    catalog_expand,
    catalog_job_request,
    entry_describe,
    entry_list,
    params_from_text,
)
from benchhub.workloads.serializers import WorkloadInSerializer

IDS = [entry.id for entry in entry_list()]
FIXED_IDS = [
    "select-only",
    "tpcb-like",
    "simple-update",
    "e1-pk-lookup",
    "e1-pk-update",
    "e1-insert",
    "e1-batch-insert",
    "e1-insert-per-table",
    "e1-batch-insert-per-table",
    "e2-idle-connections",
    "e2-connection-sweep",
    "e3-key-insert",
    "e4-write-consume",
    "e5-read-only",
    "e5-tpcb-like",
]


def _errors(call) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        call()
    return flatten_errors(caught.value.detail)


def _bodies(workload: dict) -> list[str]:
    scripts = [*workload["scripts"]]
    for stream in workload["streams"]:
        scripts += stream.get("scripts", [])
    return [script["body"] for script in scripts if script.get("body")]


def test_it_holds_the_agreed_ids():
    assert IDS == FIXED_IDS


SIZES = [(entry.id, False) for entry in entry_list()] + [
    (entry.id, True) for entry in entry_list() if entry.published_job is not None
]


@pytest.mark.parametrize(("entry_id", "published"), SIZES)
def test_it_expands_every_entry_into_a_valid_definition(entry_id, published):
    entry = next(e for e in entry_list() if e.id == entry_id)
    expansion = catalog_expand(entry_id=entry_id, published=published)
    request = WorkloadInSerializer(data=expansion.workload)
    assert request.is_valid(), request.errors
    workload = request.validated_data
    assert (workload["name"], workload["catalog_entry"]) == (entry_id, entry_id)
    assert set(workload["params"]) == {p.name for p in entry.params}
    assert expansion.job["clients"] and expansion.job["duration_s"] >= 10


def test_it_makes_two_sizes_two_definitions():
    small = catalog_expand(entry_id="e1-pk-lookup").workload
    published = catalog_expand(entry_id="e1-pk-lookup", published=True).workload
    assert small["params"] == {"rows": 100000} and published["params"] == {"rows": 100000000}
    assert "generate_series(1, 100000000)" in published["setup"][1]
    assert small["scripts"][0]["body"] == (
        "\\set id random(1, 100000)\nSELECT * FROM tbl WHERE id = :id;\n"
    )


def test_it_converts_the_scripts_to_setrandom_for_old_pgbench():
    body = catalog_expand(entry_id="e1-pk-update", params={"rows": 500}).workload["scripts"][0]
    old = script_for_client(body["body"], (9, 5))
    assert old.startswith("\\setrandom id 1 500\n") and "UPDATE tbl" in old
    assert script_for_client(old, (16, 0)) == body["body"]
    heap = catalog_expand(entry_id="e4-write-consume").workload
    for stream in heap["streams"]:
        text = script_for_client(stream["scripts"][0]["body"], (9, 5))
        assert text.startswith("\\setrandom sid 1 1000000\n")


@pytest.mark.parametrize("entry_id", IDS)
def test_it_writes_set_random_only_in_a_form_the_agent_converts(entry_id):
    for body in _bodies(catalog_expand(entry_id=entry_id).workload):
        for line in body.splitlines():
            if line.startswith("\\"):
                assert script_for_client(line, (9, 5)).startswith("\\setrandom "), line


@pytest.mark.parametrize(
    ("entry_id", "params", "path"),
    [
        ("e1-pk-lookup", {"rows": 0}, "params.rows"),
        ("e1-pk-lookup", {"rows": "100"}, "params.rows"),
        ("e1-pk-lookup", {"rowz": 100}, "params.rowz"),
        ("e1-batch-insert", {"batch": True}, "params.batch"),
        ("e3-key-insert", {"key_type": "serial"}, "params.key_type"),
        ("e3-key-insert", {"index": "yes"}, "params.index"),
        ("e3-key-insert", {"key_type": "int8", "storage": "external"}, "params.storage"),
        ("e5-read-only", {"scale": 100001}, "params.scale"),
        ("e2-idle-connections", {"idle_connections": 2, "idle_threads": 4}, "params.idle_threads"),
        ("nope", {}, "catalog"),
    ],
)
def test_it_names_the_bad_param(entry_id, params, path):
    errors = _errors(lambda: catalog_expand(entry_id=entry_id, params=params))
    assert list(errors) == [path]


def test_it_uses_every_placeholder_the_agent_fills_in_per_table_entries():
    workload = catalog_expand(entry_id="e1-batch-insert-per-table", params={"batch": 7}).workload
    assert "{max_clients}" in workload["setup"][0]
    assert "{clients}" in workload["level_setup"][0]
    (stream,) = workload["streams"]
    assert stream["per_client"] and stream["rows_per_transaction"] == 7
    assert stream["scripts"][0]["body"].startswith("INSERT INTO test{n} (crt_time) SELECT now()")


def test_it_expands_a_job_request_with_defaults_and_keeps_given_fields():
    request = catalog_job_request(
        {"versions": ["13"], "workload": {"catalog": "e5-read-only"}, "duration_s": 5}
    )
    assert request["workload"]["builtin"] == "select-only"
    assert (request["threads_policy"], request["level_threads"]) == (
        "pairs",
        {"2": 2, "4": 4, "8": 4, "16": 2},
    )
    assert (request["duration_s"], request["scale"], request["clients"]) == (5, 10, [2, 4, 8, 16])


def test_it_takes_a_jobs_scale_from_the_scale_param():
    request = catalog_job_request({"workload": {"catalog": "select-only"}, "scale": 7})
    assert request["workload"]["params"] == {"scale": 7} and request["scale"] == 7
    errors = _errors(
        lambda: catalog_job_request(
            {"workload": {"catalog": "select-only", "params": {"scale": 3}}, "scale": 7}
        )
    )
    assert list(errors) == ["scale"]


def test_it_puts_job_request_errors_under_workload():
    assert list(_errors(lambda: catalog_job_request({"workload": {"catalog": "x"}}))) == [
        "workload.catalog"
    ]
    errors = _errors(
        lambda: catalog_job_request({"workload": {"catalog": "e1-insert", "params": {"a": 1}}})
    )
    assert list(errors) == ["workload.params.a"]
    errors = _errors(
        lambda: catalog_job_request({"workload": {"catalog": "e1-insert", "name": "mine"}})
    )
    assert list(errors) == ["workload.name"]


def test_it_reads_params_typed_as_text():
    text = "key_type = text\nprefill_rows = 1_000  # rows\nindex = false\n"
    assert params_from_text(entry_id="e3-key-insert", text=text) == {
        "key_type": "text",
        "prefill_rows": 1000,
        "index": False,
    }
    assert params_from_text(entry_id="e3-key-insert", text='{"index": true}') == {"index": True}
    errors = _errors(lambda: params_from_text(entry_id="e3-key-insert", text="prefill_rows=x"))
    assert errors == {"params.prefill_rows": ["Must be a whole number."]}
    errors = _errors(lambda: params_from_text(entry_id="e1-insert", text="batch=4"))
    assert list(errors) == ["params.batch"]


def test_it_describes_an_entry_with_both_sizes():
    entry = next(e for e in entry_list() if e.id == "e4-write-consume")
    described = entry_describe(entry=entry)
    assert described["presentation"] == "streams"
    assert described["job_defaults"]["clients"] == [4]
    assert described["published_job"]["clients"] == [56]
    assert {p["name"]: p["published"] for p in described["params"]}["partitions"] == 2048
    assert "tablespace" in described["description"]


@pytest.mark.parametrize("entry_id", ["e2-idle-connections", "e2-connection-sweep"])
def test_the_published_e2_jobs_keep_the_posts_max_connections(entry_id):
    expansion = catalog_expand(entry_id=entry_id, published=True)
    assert expansion.job["config_overrides"]["max_connections"] == "11000"
    workload = workload_parse(expansion.workload)
    # The agent keeps it as given: it holds the published peak (9000 idle + 128, or 10000).
    limit = max_connections_for(workload, expansion.job["clients"], 11000)
    assert (limit.value, limit.raised_from) == (11000, None)


@pytest.mark.parametrize(("entry_id", "published"), SIZES)
def test_every_entrys_max_connections_holds_its_streams(entry_id, published):
    expansion = catalog_expand(entry_id=entry_id, published=published)
    requested = expansion.job.get("config_overrides", {}).get("max_connections")
    workload = workload_parse(expansion.workload)
    limit = max_connections_for(
        workload, expansion.job["clients"], int(requested) if requested else None
    )
    assert limit.value >= connections_peak(workload, expansion.job["clients"])


def test_it_refuses_a_version_older_than_the_entrys_minimum_naming_it():
    request = {"workload": {"catalog": "e1-insert"}, "versions": ["9.4.26", "9.6.0", "master"]}
    with pytest.raises(ValidationError) as refused:
        catalog_job_request(request)
    (message,) = flatten_errors(refused.value.detail)["versions"]
    assert "e1-insert runs on PostgreSQL 9.5 and later" in message and "not on 9.4.26." in message
    # E3 as published: 9.2.
    request = {"workload": {"catalog": "e3-key-insert"}, "versions": ["9.2.24"]}
    assert catalog_job_request(request)["versions"] == ["9.2.24"]
    assert (
        entry_describe(entry=next(e for e in entry_list() if e.id == "e1-insert"))["min_major"]
        == "9.5"
    )
