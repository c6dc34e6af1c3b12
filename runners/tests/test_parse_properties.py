"""Property-based tests: no text makes a parser raise anything but PgbenchParseError.

Besides arbitrary text, real fixtures are mutated the way captures really get damaged: lines
lost, repeated, reordered or the file cut short. The parsers wrap unexpected exceptions into
``PgbenchParseError("internal parser error: ...")``, so that prefix counts as a failure here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchhub_runner.parse import (
    PgbenchParseError,
    detect_kind,
    parse_aggregate_log,
    parse_init_output,
    parse_run_output,
    parse_text,
    parse_transaction_log,
)
from benchhub_runner.parse.errors import INTERNAL_ERROR_PREFIX

FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"
TEXTS = [p.read_text() for p in sorted(FIXTURES.glob("*.txt"))]
# Keep the big logs small so each example stays fast.
LOGS = ["\n".join(p.read_text().splitlines()[:60]) for p in sorted(FIXTURES.glob("*.log"))]
PARSERS = [
    parse_run_output,
    parse_init_output,
    parse_transaction_log,
    parse_aggregate_log,
    detect_kind,
    parse_text,
]
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,  # no .hypothesis/ directory in the repository
    suppress_health_check=[HealthCheck.too_slow],
)
# Fragments of pgbench syntax make random text reach deep into the parsers.
FRAGMENTS = st.sampled_from(
    [
        "pgbench (",
        ", server ",
        ")",
        "progress: ",
        " s, ",
        " tps, lat ",
        " ms stddev ",
        " failed",
        "transaction type: ",
        "tps = ",
        " (without initial connection time)",
        "number of transactions actually processed: ",
        "/",
        "SQL script 1: ",
        " - ",
        "statement latencies in milliseconds, failures and retries:",
        "   ",
        "\t",
        "nan",
        "-Infinity",
        "9" * 5000,
        "1.5",
        "0",
        " skipped ",
        "done in ",
        " tuples (",
        "creating tables...",
        "Run was aborted",
        "client 1 aborted",
        "\n",
        "\r",
        "\x1b[1m",
    ]
)
LINE = st.lists(st.one_of(FRAGMENTS, FRAGMENTS, st.text(max_size=5)), max_size=10).map("".join)
TEXT = st.one_of(st.text(), st.lists(LINE, max_size=30).map("\n".join))
# What a damaged or exotic number in a real line can look like.
NUMBERS = st.one_of(
    st.sampled_from(["nan", "-nan", "Infinity", "-1", "", "9" * 5000, "1e999", "0.0.0", "x"]),
    st.integers().map(str),
    st.floats().map(str),
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _check_all_parsers(text: str) -> None:
    for parse in PARSERS:
        try:
            result = parse(text)
        except PgbenchParseError as exc:
            assert not str(exc).startswith(INTERNAL_ERROR_PREFIX), str(exc)
            assert str(exc)
        else:
            if hasattr(result, "to_dict"):
                json.dumps(result.to_dict(), allow_nan=False)


@SETTINGS
@given(TEXT)
def test_it_raises_only_parse_errors_on_arbitrary_text(text: str):
    _check_all_parsers(text)


@SETTINGS
@given(st.binary(max_size=2000))
def test_it_raises_only_parse_errors_on_binary_garbage(data: bytes):
    _check_all_parsers(data.decode("utf-8", errors="replace"))


@st.composite
def mutated_fixture(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(TEXTS + LOGS)).splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 12))):
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "number"]))
        if action == "number":
            numbers = list(_NUMBER.finditer(lines[index]))
            if numbers:
                hit = numbers[draw(st.integers(0, len(numbers) - 1))]
                line = lines[index]
                lines[index] = line[: hit.start()] + draw(NUMBERS) + line[hit.end() :]
        elif action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        else:
            lines.insert(index, draw(FRAGMENTS) + draw(st.text(max_size=10)) + "\n")
    text = "".join(lines)
    return text[: draw(st.integers(0, len(text)))] if draw(st.booleans()) else text


@SETTINGS
@given(mutated_fixture())
def test_it_raises_only_parse_errors_on_damaged_real_output(text: str):
    _check_all_parsers(text)


@pytest.mark.parametrize(
    "name", ["pg15-select-only-P1-r-T3.txt", "pg18-multi-script-weights-r.txt"]
)
def test_it_still_reads_a_capture_cut_short(read_fixture, name: str):
    text = read_fixture(name)
    whole, cut = parse_run_output(text), parse_run_output(text[: len(text) // 2])
    assert cut.pgbench_version == whole.pgbench_version
    assert len(cut.statements) < len(whole.statements)
