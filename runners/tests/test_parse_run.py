"""Tests of :func:`parse_run_output` beyond the fixture snapshots: formats, quirks, aborts."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import pytest

from benchhub_runner.parse import PgbenchParseError, parse_run_output

FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"
RUN_FIXTURES = sorted(
    p for p in FIXTURES.glob("*.txt") if "init" not in p.name and "exit-on-abort" not in p.name
)
# Lines whose numbers are message text, not results (errors, banner, vacuum, 9.2 \set noise),
# and 9.6's single-script skipped count, which is a bogus "0 (-nan%)" (reference notes §3.5).
_NOT_RESULTS = re.compile(
    r"^(pgbench[: ]|[Cc]lient |ERROR|LINE |\s+\^|Run was|starting vacuum|set: |NOTICE|"
    r" - number of transactions skipped: \d+ \(-?nan%\))"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\d.]*\s*%)")


def _numbers_printed(text: str) -> set[float]:
    numbers = set()
    for line in text.splitlines():
        if _NOT_RESULTS.match(line):
            continue
        if line[:1] in (" ", "\t") and not line.startswith(" - "):
            # a per-statement line: the numeric columns only, not the command text
            line = " ".join(re.findall(r"^\s*((?:[-\w.]+\s+){1,3})", line)[0].split()[:3])
        numbers.update(float(n) for n in _NUMBER.findall(line))
    return numbers


def _numbers_kept(value: object) -> set[float]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return set()
    if isinstance(value, int | float):
        return {float(value)}
    items = value.values() if isinstance(value, dict) else value
    return set().union(*(_numbers_kept(item) for item in items))  # type: ignore[union-attr]


@pytest.mark.parametrize("path", RUN_FIXTURES, ids=lambda p: p.name)
def test_it_keeps_every_number_printed_in_the_results(path: Path):
    text = path.read_text()
    assert _numbers_printed(text) - _numbers_kept(parse_run_output(text).to_dict()) == set()


def test_it_reads_the_real_pg15_select_only_run(read_fixture):
    out = parse_run_output(read_fixture("pg15-select-only-P1-r-T3.txt"))

    assert out.pgbench_version == "15.20 (Debian 15.20-0+deb12u1)"
    assert out.server_version is None
    assert (out.transaction_type, out.clients, out.threads, out.duration_s) == (
        "<builtin: select only>",
        2,
        2,
        3,
    )
    assert out.tps_including_connections is None
    assert [p.t for p in out.progress] == [1.0, 2.0, 3.0]
    assert all(p.failed == 0 and p.lag_ms is None for p in out.progress)
    assert [s.command for s in out.statements] == [
        r"\set aid random(1, 100000 * :scale)",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    ]
    assert all(s.failures == 0 and s.retries is None for s in out.statements)


def test_it_reads_the_nested_parentheses_banner_with_a_server_part():
    out = parse_run_output("pgbench (15.18 (Debian 15.18-0+deb12u1), server 14.23)\n")
    assert out.pgbench_version == "15.18 (Debian 15.18-0+deb12u1)"
    assert out.server_version == "14.23"


@pytest.mark.parametrize(
    ("banner", "client", "server"),
    [
        ("pgbench (PostgreSQL) 14.0", "14.0", None),
        ("pgbench (17beta1)", "17beta1", None),
        (
            "pgbench (18.6, server 15.18 (Debian 15.18-0+deb12u1))",
            "18.6",
            "15.18 (Debian 15.18-0+deb12u1)",
        ),
        ("pgbench (16.1 (Ubuntu 16.1-1.pgdg22.04+1))", "16.1 (Ubuntu 16.1-1.pgdg22.04+1)", None),
    ],
)
def test_it_reads_every_banner_form(banner: str, client: str, server: str | None):
    out = parse_run_output(banner + "\ntransaction type: <builtin: select only>\n")
    assert (out.pgbench_version, out.server_version) == (client, server)


def test_it_reads_every_progress_variant():
    text = "\n".join(
        [
            "progress: 1795263744.609 s, 1605.7 tps, lat 0.621 ms stddev 0.144, 0 failed",
            "progress 1: 5.0 s, 1201.3 tps, lat 4.001 ms stddev 1.884, lag 0.231 ms, skipped 12",
            "progress: 1.0 s, 0.0 tps, lat nan ms stddev -nan",
            "progress: 2.0 s, 2997.5 tps, lat 0.923 ms stddev 0.563, 2612 failed, "
            "lag 0.1 ms, 3 skipped, 4301 retried, 7609 retries",
        ]
    )
    progress = parse_run_output(text).to_dict()["progress"]

    assert progress[0] == {
        "t": 1795263744.609,
        "tps": 1605.7,
        "latency_ms": 0.621,
        "stddev_ms": 0.144,
        "failed": 0,
        "skipped": None,
        "lag_ms": None,
        "retried": None,
        "retries": None,
    }
    assert (progress[1]["skipped"], progress[1]["lag_ms"]) == (12, 0.231)
    assert (progress[2]["latency_ms"], progress[2]["stddev_ms"]) == (None, None)
    assert progress[3] == {
        "t": 2.0,
        "tps": 2997.5,
        "latency_ms": 0.923,
        "stddev_ms": 0.563,
        "failed": 2612,
        "skipped": 3,
        "lag_ms": 0.1,
        "retried": 4301,
        "retries": 7609,
    }


def test_it_keeps_non_finite_numbers_in_the_dataclass_and_nulls_them_in_json():
    text = "tps = -nan (excluding connections establishing)\nlatency average = Infinity ms\n"
    out = parse_run_output(text)

    assert math.isnan(out.tps) and out.latency_avg_ms == math.inf
    data = out.to_dict()
    assert (data["tps"], data["latency_avg_ms"]) == (None, None)
    json.dumps(data, allow_nan=False)


def test_it_reads_the_statement_columns_of_every_version():
    text = "\n".join(
        [
            "statement latencies in milliseconds, file 2:",
            "\t0.082807\t  FROM pgbench_accounts",
            "SQL script 1: ser.sql",
            " - statement latencies in milliseconds:",
            "         nan  \\sleep 10 ms",
            " - statement latencies in milliseconds, failures and retries:",
            "         0.151        7862       22983  UPDATE hot SET v = v + 1 WHERE id = 1;",
            "         0.125         116        502 1 + 1;",
            "statement latencies in milliseconds and failures:",
            "         0.001           0 \\set aid random(1, 100000 * :scale)",
        ]
    )
    statements = [s.__dict__ for s in parse_run_output(text).statements]

    assert statements[0] == {
        "latency_ms": 0.082807,
        "failures": None,
        "retries": None,
        "command": "  FROM pgbench_accounts",
        "script": 2,
    }
    assert math.isnan(statements[1]["latency_ms"]) and statements[1]["script"] == 1
    assert [(s["failures"], s["retries"], s["command"]) for s in statements[2:]] == [
        (7862, 22983, "UPDATE hot SET v = v + 1 WHERE id = 1;"),
        (116, 502, "1 + 1;"),
        (0, None, r"\set aid random(1, 100000 * :scale)"),
    ]


def test_it_counts_the_successful_transactions_of_an_18_script(read_fixture):
    out = parse_run_output(read_fixture("pg18-doc-two-scripts-retries-rate.txt"))
    # " - 2017 transactions (34.2% of total)" includes the failed ones; 1901 succeeded.
    assert (out.scripts[0].transactions, out.scripts[0].tps) == (1901, 954.704519)
    assert out.scripts[0].failed_transactions == 116


def test_it_reports_reconnection_tps_as_including_connections(read_fixture):
    out = parse_run_output(read_fixture("pg14-connect-mismatch-constructed.txt"))
    assert out.tps is None
    assert out.tps_including_connections == 1109.135291
    assert out.average_connection_time_ms == 1.64


@pytest.mark.parametrize("seed", range(20))
def test_it_reads_stderr_interleaved_anywhere(read_fixture, seed: int):
    text = (
        read_fixture("pg18-rate-latency-limit-P1.txt")
        + read_fixture("pg15-select-only-P1-r-T3.txt").split("\n", 1)[1]
    )
    lines = text.splitlines()
    is_stderr = [ln.startswith(("progress:", "starting vacuum")) for ln in lines]
    stdout = [ln for ln, err in zip(lines, is_stderr, strict=True) if not err]
    stderr = [ln for ln, err in zip(lines, is_stderr, strict=True) if err]
    rng = random.Random(seed)
    # Sorted insertion points keep each stream's own order, as a 2>&1 capture does.
    positions = sorted(rng.randint(0, len(stdout)) for _ in stderr)
    mixed = list(stdout)
    for offset, (position, line) in enumerate(zip(positions, stderr, strict=True)):
        mixed.insert(position + offset, line)
    assert parse_run_output("\n".join(mixed)).to_dict() == parse_run_output(text).to_dict()


def test_it_marks_an_aborted_run_and_lists_its_errors(read_fixture):
    out = parse_run_output(read_fixture("pg18-aborted-divzero.txt"))

    assert out.aborted is True
    assert out.transactions == 0 and out.planned_transactions == 10
    assert len(out.errors) == 3
    assert out.errors[-1] == "pgbench: error: Run was aborted; the above results are incomplete."
    assert all("division by zero" in e for e in out.errors[:2])


def test_it_marks_a_run_aborted_when_t_transactions_are_missing_without_a_message():
    text = "number of transactions per client: 5\nnumber of transactions actually processed: 7/10\n"
    assert parse_run_output(text).aborted is True


def test_it_does_not_mark_failures_as_an_abort(read_fixture):
    out = parse_run_output(read_fixture("pg15-serializable-retries.txt"))
    assert out.aborted is False and out.errors == []
    assert out.failed_transactions > 0 and out.retried_transactions > 0


def test_it_finds_run_was_aborted_spliced_into_a_stdout_line():
    text = "transaction type: s.sql\nnumber ofRun was aborted; the above results are incomplete.\n"
    out = parse_run_output(text)
    assert out.aborted is True
    assert out.errors == ["Run was aborted; the above results are incomplete."]


def test_it_strips_colour_codes():
    text = (
        "\x1b[1mpgbench: \x1b[0m\x1b[1;31merror: \x1b[0mRun was aborted; the above results are "
        "incomplete.\ntransaction type: x.sql\n"
    )
    out = parse_run_output(text)
    assert out.aborted is True and out.errors[0].startswith("pgbench: error: Run was aborted")


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "\x00\xff\ufffd" * 50, "tps: 12\n"])
def test_it_rejects_text_that_is_not_pgbench_output(text: str):
    with pytest.raises(PgbenchParseError, match="no version banner"):
        parse_run_output(text)


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_ignores_retried_errors_of_verbose_errors(read_fixture, version: str):
    out = parse_run_output(read_fixture(f"{version}-serializable-verbose-errors.txt"))

    # "pgbench: client N got an error ..." are retriable failures, counted, not aborts
    assert out.errors == [] and out.aborted is False
    assert out.transactions + out.failed_transactions == out.planned_transactions == 20
    assert out.latency_includes_failures is True


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_reads_a_real_connect_per_transaction_run(read_fixture, version: str):
    out = parse_run_output(read_fixture(f"{version}-select-only-connect-C-t20.txt"))
    assert out.tps is None and out.tps_including_connections is not None
    assert out.average_connection_time_ms is not None and out.initial_connection_time_ms is None
