"""Every fixture parses to exactly the values in its ``.expected.json`` (every field).

The expected files were checked by hand against the text; ``test_parse_run.py`` also checks,
independently of them, that no number printed in a results block is lost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchhub_runner.parse import detect_kind, parse_text

FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".txt", ".log"))


def test_it_has_an_expected_file_for_every_fixture():
    missing = [p.name for p in CASES if not Path(f"{p}.expected.json").exists()]
    assert missing == []
    assert len(CASES) >= 60


def test_it_has_real_captures_of_both_versions_for_every_scenario():
    names = {p.name for p in CASES}
    for scenario in (
        "select-only-P1-r-T3.txt",
        "tpcb-like-t50.txt",
        "multi-script-weights-r.txt",
        "rate-latency-limit-P1.txt",
        "aborted-divzero.txt",
        "serializable-retries.txt",
        "init-s1.txt",
        "txlog-S-t200.log",
        "txlog-rate-latency-limit.log",
        "agglog-S-T4.log",
        "agglog-rate-latency-limit.log",
    ):
        assert {f"pg15-{scenario}", f"pg18-{scenario}"} <= names


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_it_parses_the_fixture_to_the_expected_values(path: Path):
    expected = json.loads(Path(f"{path}.expected.json").read_text())
    text = path.read_text()

    assert detect_kind(text) == expected["kind"]
    result = parse_text(text, expected["kind"]).to_dict()
    assert result == expected["result"]
    json.dumps(result, allow_nan=False)  # strict JSON, even with NaN in the text


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_it_parses_crlf_line_ends_the_same(path: Path):
    text = path.read_text()
    crlf = text.replace("\n", "\r\n")
    assert parse_text(crlf).to_dict() == parse_text(text).to_dict()
