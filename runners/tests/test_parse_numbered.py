"""Outputs whose lines a blog, a wiki or a terminal numbered still parse, as the other pasted
shapes do (``test_parse_pasted.py`` reads the numbered fixtures of ``fixtures/pasted/``).

Every run fixture is numbered here in each style a renderer uses, whole and with an elision; the
numbers go only when they number the lines consistently, so text that merely starts with digits
is kept as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchhub_runner.parse import parse_run_output, parse_text, runs_split
from benchhub_runner.parse.pasted import numbers_strip

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = sorted(
    p
    for p in (FIXTURES / "pgbench").glob("*.txt")
    if json.loads(Path(f"{p}.expected.json").read_text())["kind"] == "run"
)
STYLES: dict[str, Callable[[int, str], str]] = {
    "blog": lambda n, line: f"{n:>4}. {line}",
    "wiki": lambda n, line: f"{n:>3} | {line}",
    "wiki-tight": lambda n, line: f"{n}|{line}",
    "grep -n": lambda n, line: f"{n}:{line}",
    "cat -n": lambda n, line: f"{n:>6}\t{line}",
}


def _numbered(lines: list[str], style: str, start: int = 1) -> str:
    return "\n".join(STYLES[style](n, line) for n, line in enumerate(lines, start)) + "\n"


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_it_reads_every_run_fixture_numbered(path: Path, style: str):
    text = path.read_text()
    assert parse_text(_numbered(text.splitlines(), style)).to_dict() == parse_text(text).to_dict()


@pytest.mark.parametrize("style", ["blog", "wiki"])
def test_it_reads_a_numbered_block_in_a_fence_with_prose_around(style: str):
    text = (FIXTURES / "pgbench" / "pg96-tpcb-P1-r.txt").read_text()
    page = f"Results on the new box:\n\n```\n{_numbered(text.splitlines(), style)}```\n\nNice.\n"
    assert parse_text(page).to_dict() == parse_text(text).to_dict()


def test_it_reads_numbers_that_jump_across_an_elision():
    lines = (FIXTURES / "pgbench" / "pg15-select-only-P1-r-T3.txt").read_text().splitlines()
    # Lines 4 and 5 (two progress lines) cut; the block keeps the file's numbers.
    page = _numbered(lines[:3], "blog") + "   ...\n" + _numbered(lines[5:], "blog", start=6)
    result = parse_run_output(page)
    assert [sample.t for sample in result.progress] == [1.0]
    assert result.tps == 51755.494899
    assert result.pgbench_version == "15.20 (Debian 15.20-0+deb12u1)"


def test_it_reads_the_command_line_of_a_bracketed_shell_prompt():
    text = (FIXTURES / "pgbench" / "pg13-partitioned-P1-r.txt").read_text()
    lines = ["[pg13@pg01 ~]$ pgbench -M prepared -c 4 -j 2 -T 3 -P 1 -r", *text.splitlines()]
    result = parse_run_output(_numbered(lines, "blog"))
    assert (result.clients, result.query_mode) == (4, "simple")  # printed wins
    cut = [lines[0], *text.splitlines()[13:]]  # the header cut: the command says it
    result = parse_run_output(_numbered(cut, "blog"))
    assert (result.clients, result.threads, result.duration_s) == (4, 2, 3)


def test_it_splits_a_page_of_numbered_runs_and_keeps_their_numbers():
    first = (FIXTURES / "pgbench" / "pg15-select-only-P1-r-T3.txt").read_text().splitlines()
    second = (FIXTURES / "pgbench" / "pg18-select-only-P1-r-T3.txt").read_text().splitlines()
    blocks = [
        _numbered(["[pg15@pg01 ~]$ pgbench -S -c 2 -j 2 -T 3 -P 1 -r bench", *first], "blog"),
        _numbered(["[pg18@pg01 ~]$ pgbench -S -c 2 -j 2 -T 3 -P 1 -r bench", *second], "blog"),
    ]
    parts = runs_split("\n".join(blocks))
    assert [part.strip("\n") for part in parts] == [block.strip("\n") for block in blocks]
    assert [parse_run_output(p).pgbench_version for p in parts] == [
        parse_run_output("\n".join(first)).pgbench_version,
        parse_run_output("\n".join(second)).pgbench_version,
    ]


@pytest.mark.parametrize(
    "lines",
    [
        ["1. first step", "3. third step"],  # a jump with nothing cut
        ["1. one", "2| two", "3. three"],  # two styles
        ["3. three", "2. two"],  # backwards without a new block
        ["12 apples", "13 pears"],  # no separator
        ["1.5 s", "2.5 s"],  # numbers, not line numbers
        ["1. only one numbered line"],
    ],
)
def test_it_keeps_lines_that_are_not_numbered_consistently(lines: list[str]):
    assert numbers_strip(lines) == lines


def test_it_strips_blocks_that_restart_at_one_and_keeps_unnumbered_lines():
    lines = ["Before:", "1. a", "2. b", "", "After:", "1. c", "2.", "3.  d"]
    assert numbers_strip(lines) == ["Before:", "a", "b", "", "After:", "c", "", " d"]
