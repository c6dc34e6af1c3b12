"""Tests of ``benchhub-runner parse``, run as a real subprocess like the agent and users do."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from benchhub_runner.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"
RUNNERS = Path(__file__).resolve().parents[1]


def _reject_nan(token: str) -> None:
    raise AssertionError(f"not strict JSON: {token}")


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(RUNNERS), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "benchhub_runner.cli", "parse", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_it_prints_one_object_for_one_file():
    result = run_cli(FIXTURES / "pg15-select-only-P1-r-T3.txt")

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout, parse_constant=_reject_nan)
    assert isinstance(data, dict)
    assert data["pgbench_version"] == "15.20 (Debian 15.20-0+deb12u1)"
    assert data["transaction_type"] == "<builtin: select only>"
    assert len(data["progress"]) == 3 and len(data["statements"]) == 2
    assert result.stderr == ""


def test_the_cli_parses_the_published_numbered_logs():
    paths = sorted((FIXTURES.parent / "pasted").glob("numbered-dot-e2-*.txt"))
    result = run_cli(*paths)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(d["pgbench_version"], d["clients"], d["tps"]) for d in data] == [
        (None, 128, 403603.77184),
        ("14beta1", 128, 600621.462871),
    ]


def test_it_prints_an_array_in_argument_order_for_several_files():
    names = ["pg18-aborted-divzero.txt", "pg18-init-s1.txt", "pg18-agglog-S-T4.log"]
    result = run_cli(*(FIXTURES / n for n in names))

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout, parse_constant=_reject_nan)
    assert [type(d) for d in data] == [dict, dict, dict]
    assert data[0]["aborted"] is True and data[0]["server_version"].startswith("15.20")
    assert data[1]["rows"] == 100000
    assert data[2]["kind"] == "agglog"


def test_it_prints_strict_json_for_nan_in_the_output():
    result = run_cli(
        FIXTURES / "pg15-aborted-divzero.txt", FIXTURES / "pg96-rate-latency-limit-nan.txt"
    )
    assert result.returncode == 0
    json.loads(result.stdout, parse_constant=_reject_nan)


def test_it_exits_2_naming_the_file_and_what_was_missing(tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list\n- milk\n")
    result = run_cli(FIXTURES / "pg15-tpcb-like-t50.txt", notes)

    assert result.returncode == 2
    assert result.stdout == ""  # all or nothing
    assert f"{notes}: not pgbench output: no version banner" in result.stderr
    assert "Traceback" not in result.stderr


def test_it_exits_2_for_missing_unreadable_and_binary_files(tmp_path: Path):
    binary = tmp_path / "garbage.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    result = run_cli(tmp_path / "missing.txt", tmp_path, binary)

    assert result.returncode == 2
    assert (
        f"{tmp_path / 'missing.txt'}: cannot read file: No such file or directory" in result.stderr
    )
    assert f"{tmp_path}: cannot read file" in result.stderr
    assert f"{binary}: not pgbench output" in result.stderr
    assert "Traceback" not in result.stderr


def test_it_parses_as_the_kind_it_is_told(tmp_path: Path):
    forced = run_cli("--kind", "init", FIXTURES / "pg15-tpcb-like-t50.txt")
    assert forced.returncode == 2
    assert "not pgbench -i output" in forced.stderr

    ok = run_cli("--kind", "txlog", FIXTURES / "pg15-txlog-retries.log")
    assert json.loads(ok.stdout)["total"]["failed"] > 0


@settings(max_examples=60, deadline=None, database=None)
@given(st.binary(max_size=3000))
def test_it_never_raises_from_main_whatever_the_file_holds(data: bytes):
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "capture.txt"
        path.write_bytes(data)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = main(["parse", str(path)])
    assert status in (0, 2)
    assert (status == 2) == (stdout.getvalue() == "")
    if status == 2:
        assert stderr.getvalue().startswith(f"benchhub-runner parse: {path}: ")
