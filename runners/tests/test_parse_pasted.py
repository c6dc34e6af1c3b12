"""Pasted pgbench output: what users copy into wikis, READMEs and issue threads still parses.

The shapes the importer used to refuse live in ``fixtures/pasted/``, made from the real kept
outputs of ``fixtures/pgbench/`` by ``make_pasted.py``: code blocks indented by 2 to 8 spaces or
a tab (with prose around them), fences and quote markers, summary lines joined onto one line,
``tail`` fragments, cut headers. Beyond those files, every run fixture is pasted each way here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchhub_runner.parse import detect_kind, parse_run_output, parse_text, runs_split
from benchhub_runner.parse.command import command_line_parse

FIXTURES = Path(__file__).parent / "fixtures"
PASTED = sorted((FIXTURES / "pasted").glob("*.txt"))
RUNS = sorted(
    p
    for p in (FIXTURES / "pgbench").glob("*.txt")
    if json.loads(Path(f"{p}.expected.json").read_text())["kind"] == "run"
)
EMPTY: tuple[Any, ...] = (None, [], False)


def _summary_lines(text: str) -> list[int]:
    lines = text.splitlines()
    return [i for i, line in enumerate(lines) if line.startswith(("number of ", "latency a"))]


# Two fixtures are only a script section or only an abort: nothing there to join.
WITH_SUMMARY = [p for p in RUNS if len(_summary_lines(p.read_text())) >= 2]


def _source(expected: dict[str, Any]) -> dict[str, Any]:
    return parse_run_output((FIXTURES / "pgbench" / expected["source"]).read_text()).to_dict()


def test_it_joins_the_summary_of_nearly_every_run_fixture():
    assert len(WITH_SUMMARY) >= len(RUNS) - 2


def test_it_has_a_fixture_of_every_refused_shape():
    shapes = {p.name.split("-")[0] for p in PASTED}
    assert shapes == {"indented", "fenced", "joined", "tail", "cut", "numbered"}
    assert len(PASTED) >= 19


@pytest.mark.parametrize("path", PASTED, ids=lambda p: p.name)
def test_it_reads_the_pasted_fixture(path: Path):
    expected = json.loads(Path(f"{path}.expected.json").read_text())
    assert detect_kind(path.read_text()) == "run"
    result = parse_run_output(path.read_text()).to_dict()
    if expected["source"] is None:  # constructed as a post prints it: no capture behind it
        assert {k: result[k] for k in expected["fields"]} == expected["fields"]
        return
    source = _source(expected)
    if expected["same_as_source"]:
        assert result == source
        return
    assert {k: result[k] for k in expected["fields"]} == expected["fields"]
    # A fragment holds less than its source, never something else; where the author cut lines
    # (`cut`), a list holds some of the source's items.
    from_command = set(expected.get("from_command", []))
    for key in expected.get("cut", []):
        assert result[key] and len(result[key]) < len(source[key]), key
        assert all(item in source[key] for item in result[key]), key
    for key, value in result.items():
        if value not in EMPTY and key not in from_command | set(expected.get("cut", [])):
            assert value == source[key], key


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_it_reads_every_run_fixture_indented_fenced_and_quoted(path: Path):
    text = path.read_text()
    original = parse_text(text).to_dict()
    lines = text.splitlines()
    for indent in ("  ", "    ", "        ", "\t"):
        block = "\n".join(indent + line if line else "" for line in lines)
        assert parse_text(f"Output:\n\n{block}\n\nThat is all.").to_dict() == original, indent
    fenced = "```console\n" + text + "\n```"
    assert parse_text(fenced).to_dict() == original
    quoted = "\n".join(f"> > {line}" for line in lines)
    assert parse_text(quoted).to_dict() == original


@pytest.mark.parametrize("path", WITH_SUMMARY, ids=lambda p: p.name)
def test_it_splits_summary_lines_joined_onto_one_line(path: Path):
    text = path.read_text()
    original = parse_text(text).to_dict()
    lines = text.splitlines()
    summary = _summary_lines(text)
    first, last = summary[0], summary[-1]
    joined = [*lines[:first], " ".join(lines[first : last + 1]), *lines[last + 1 :]]
    assert parse_text("\n".join(joined)).to_dict() == original


def test_it_splits_the_tps_lines_of_older_versions_even_without_a_space():
    text = (
        "number of clients: 4 number of threads: 2 duration: 60 s number of transactions actually"
        " processed: 120 tps = 2.0 (including connections establishing)tps = 2.1 (excluding "
        "connections establishing)"
    )
    result = parse_run_output(text)
    assert (result.clients, result.threads, result.duration_s, result.transactions) == (
        4,
        2,
        60,
        120,
    )
    assert (result.tps_including_connections, result.tps) == (2.0, 2.1)


def test_it_keeps_html_line_breaks_and_pre_tags_of_a_wiki_page():
    text = (
        "<pre>number of clients: 8<br>number of threads: 8<br/>"
        "tps = 900.5 (without initial connection time)</pre>"
    )
    result = parse_run_output(text)
    assert (result.clients, result.threads, result.tps) == (8, 8, 900.5)


@pytest.mark.parametrize(
    ("line", "clients", "threads", "duration", "kind"),
    [
        ("$ pgbench -c 52 -j 52 -T 120 -S bench", 52, 52, 120, "<builtin: select only>"),
        ("postgres@db:~$ pgbench -c52 -j8 -T60 -M prepared", 52, 8, 60, None),
        (
            "/usr/lib/postgresql/14/bin/pgbench --client=16 --jobs 4 --time=30 -b simple-update",
            16,
            4,
            30,
            "<builtin: simple update>",
        ),
        ("pgbench -n -t 1000 -c 4 db # comment -c 9", 4, None, None, None),
    ],
)
def test_it_reads_a_pasted_command_line(line, clients, threads, duration, kind):
    command = command_line_parse(line)
    assert command is not None
    assert (command.clients, command.threads, command.duration_s, command.transaction_type) == (
        clients,
        threads,
        duration,
        kind,
    )


@pytest.mark.parametrize("line", ["pgbench -i -s 100 bench", "pgbench (15.2)", "run pgbench now"])
def test_it_takes_no_command_from_other_lines(line):
    assert command_line_parse(line) is None


def test_it_lets_what_pgbench_printed_win_over_the_command_line():
    text = (
        "$ pgbench -c 99 -T 5\nnumber of clients: 3\ntps = 10.0 (without initial connection time)"
    )
    result = parse_run_output(text)
    assert (result.clients, result.duration_s) == (3, 5)


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_it_never_splits_one_run(path: Path):
    text = path.read_text()
    assert runs_split(text) == [text]
    indented = "\n".join(f"    {line}" for line in text.splitlines())
    assert len(runs_split(indented)) == 1


# The real captures that start with their banner, as a page of results shows them in a row.
BANNERED = [p for p in RUNS if p.read_text().startswith("pgbench (")]


def test_it_splits_a_page_of_several_runs_one_after_another():
    assert len(BANNERED) >= 10
    texts = [p.read_text() for p in BANNERED]
    parts = runs_split("".join(texts))
    assert [parse_text(part).to_dict() for part in parts] == [
        parse_text(text).to_dict() for text in texts
    ]


def test_it_splits_runs_at_their_command_lines_and_at_a_new_transaction_type():
    one = (FIXTURES / "pgbench" / "pg96-tpcb-c2-t50.txt").read_text()
    cut = (FIXTURES / "pasted" / "cut-header-pg18-tpcb-like-t50.txt").read_text()
    page = f"$ pgbench -c 1 bench\n{cut}\n$ pgbench -c 4 bench\n{cut}\n{one}{one}"
    parts = runs_split(page)
    assert [parse_run_output(p).clients for p in parts] == [1, 4, 2, 2]
    assert parse_run_output(parts[3]).to_dict() == parse_run_output(one).to_dict()


def test_it_keeps_a_command_line_with_the_banner_that_follows_it():
    text = (FIXTURES / "pgbench" / "pg15-select-only-P1-r-T3.txt").read_text()
    page = f"$ pgbench -S -c 2 bench\n{text}$ pgbench -S -c 2 bench\n{text}"
    parts = runs_split(page)
    assert parts == [f"$ pgbench -S -c 2 bench\n{text}"] * 2
