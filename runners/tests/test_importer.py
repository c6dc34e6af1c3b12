"""The import payload of pasted outputs: what is missing is named, what is given fills it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from benchhub_runner.results.importer import (
    ImportIncomplete,
    ImportRefused,
    import_payload_from_texts,
)

FIXTURES = Path(__file__).parent / "fixtures"
WHOLE = (FIXTURES / "pgbench" / "pg15-select-only-P1-r-T3.txt").read_text()
TAIL = (FIXTURES / "pasted" / "tail-4-pg92-tpcb-c2-t50.txt").read_text()
NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def payload(texts: list[str], **given):
    return import_payload_from_texts(
        texts=[(f"out{n}", text) for n, text in enumerate(texts)],
        version=given.pop("version", ""),
        host="old-box",
        settings={},
        lscpu="",
        started_at=NOW,
        finished_at=NOW,
        **given,
    )


def test_it_names_every_missing_field_with_what_it_read():
    with pytest.raises(ImportIncomplete) as asked:
        payload([WHOLE, TAIL])
    assert set(asked.value.missing) == {"outputs[1].clients"}  # version: the banner; workload
    assert asked.value.read["version"] == "15.20"
    assert asked.value.read["outputs"][1]["tps"] == 1644.412287
    with pytest.raises(ImportIncomplete) as asked:
        payload([TAIL])
    assert set(asked.value.missing) == {"outputs[0].clients", "version", "workload"}


def test_it_fills_only_what_the_outputs_do_not_say():
    run = payload([WHOLE, TAIL], clients=[99, 4], version="15.4")
    assert run["clients"] == [2, 4]  # out0 says 2: the 99 given for it is not used
    assert run["build"]["version"] == "15.4"
    assert run["workload"]["builtin"] == "select-only"  # the fragment agrees with any workload


def test_it_takes_a_named_workload_where_no_output_names_one():
    run = payload([TAIL], clients=[2], version="9.2.24", workload="my-script")
    assert run["workload"]["name"] == "my-script"
    assert run["workload"]["scripts"][0]["body"].startswith("-- not recorded")


def test_it_still_refuses_outputs_that_disagree_where_both_say():
    other = WHOLE.replace("scaling factor: 1", "scaling factor: 7")
    with pytest.raises(ImportRefused, match="scaling_factor is 7"):
        payload([WHOLE, other])


def test_the_cli_names_what_files_lack_and_takes_it_from_options(capsys):
    from benchhub_runner.cli import main

    tail = str(FIXTURES / "pasted" / "tail-4-pg92-tpcb-c2-t50.txt")
    common = ["import", tail, "--server", "http://127.0.0.1:9", "--token", "x", "--host", "h"]
    assert main([*common, "--dry-run"]) == 2
    refused = capsys.readouterr().err
    assert "outputs[0].clients" in refused and "version" in refused and "workload" in refused
    options = ["--clients", "2", "--version", "9.2.24", "--workload", "tpcb-like", "--dry-run"]
    assert main([*common, *options]) == 0
    printed = capsys.readouterr().out
    assert '"clients": [\n    2\n  ]' in printed and '"builtin": "tpcb-like"' in printed
