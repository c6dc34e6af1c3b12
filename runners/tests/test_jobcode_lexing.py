"""How the job-code checker lexes SQL where psql and pgbench majors differ from a naive reader
(benchhub_runner.jobcode.sqllex, jobcode): comments ended by `\\r`, non-ASCII bytes that are name
characters, what joins a number, strings continued after a newline. The real pgbench holds the
checker to these in test_jobcode_fuzz.py."""

from __future__ import annotations

import pytest

from benchhub_runner.jobcode.sql import check_script, check_sql
from benchhub_runner.jobcode.sqllex import JUNK_READINGS, sql_tokens


def reasons(script: str) -> str:
    return " | ".join(str(refusal) for refusal in check_script(script, field="s"))


@pytest.mark.parametrize(
    ("script", "line", "words"),
    [
        # pgbench ends a -- comment at \r, so the \shell after it is code
        ("SELECT 1 -- note\r\\shell id\n", 1, "\\shell"),
        ("SELECT 1;\n-- note\r\\shell id\n", 2, "U+000D"),
        # U+00A0, U+0085 and every other non-ASCII character are part of a name to pgbench
        ("SELECT 1 \u00a0$x$ ;\n\\shell id\n$x$;\n", 2, "\\shell"),
        ("SELECT 1 \u0085$x$ ;\n\\shell id\n$x$;\n", 1, "U+0085 next to a quote, $"),
        ("SELECT 1 \u3000$x$ ;\n\\shell id\n$x$;\n", 1, "U+3000"),
        ("SELECT \ufeff'a' ;\n", 1, "U+FEFF"),
        # 15 and later: `1E` is one token, then a plain string that a backslash does not escape
        ("SELECT 1E'\\' \\shell id\n';\n", 1, "\\shell"),
        ("SELECT 1.e'\\' \\shell id\n';\n", 1, "\\shell"),
        ("SELECT $1e'\\' \\shell id\n';\n", 1, "\\shell"),
        # 15.9 and later: a whole name joins the number, so the dollar quote is not one
        ("SELECT 1e51$x$ ;\n\\shell id\n$x$;\n", 2, "\\shell"),
        # before 15: `1e` gives back the e, and `e$x$` is a name, not a dollar quote
        ("SELECT 1e$x$ ;\n\\shell id\n$x$;\n", 2, "\\shell"),
        # a psql variable is one token: `$x$` after it opens a dollar quote
        ("SELECT :a$x$ $x$ \\shell id\n", 1, "\\shell"),
        # B'' takes no doubled quote: it ends, and a plain string starts
        ("SELECT B'1''\\' \\shell id\n';\n", 1, "\\shell"),
        # a vertical tab is a space only from 17; NUL ends pgbench's script
        ("SELECT 1\v\\shell id\n", 1, "U+000B"),
        ("SELECT 1;\n\n'\x00' \\shell id\n", 3, "U+0000"),
    ],
)
def test_it_refuses_what_pgbench_reads_as_a_meta_command_naming_the_line(script, line, words):
    refused = check_script(script, field="s")
    assert any(r.line == line and words in r.reason for r in refused), reasons(script)


@pytest.mark.parametrize(
    "script",
    [
        "SELECT 1; -- note\r\nSELECT 2;\r\n\\set x 1\r\nSELECT :x;\r\n",
        "SELECT 1 \\; SELECT 2;\n",
        "SELECT 'a'\n'\\' || 'b';\n",
        "SELECT 1e5, 0x1F, 1_000, .5e-3, 1.5::numeric;\n",
        "SELECT 'caf\u00e9', \"na\u00efve\" FROM t WHERE x = '\u00a0';\n",
        "SELECT $x$ \\shell id $x$;\n",
        "SELECT E'it\\'s \\shell' ;\n",
        "SELECT 1 /* a /* nested \\shell */ \\shell */;\n",
    ],
)
def test_it_accepts_scripts_every_reader_reads_without_a_meta_command(script):
    assert reasons(script) == ""


def test_it_reads_a_continued_string_with_its_first_parts_escaping():
    text = "SELECT E'a'\n'\\' \\shell id\n';"
    for junk in JUNK_READINGS:
        kinds = [t.kind for t in sql_tokens(text, junk=junk)]
        assert "meta" not in kinds and kinds.count("string") == 1, kinds


@pytest.mark.parametrize(
    ("text", "junk", "tokens"),
    [
        ("1e$x$ x", "none", ["1", "e$x$", "x"]),
        ("1e$x$ x", "start", ["1e", " x"]),
        ("1e$x$ x", "identifier", ["1e$x$", "x"]),
        ("1e51$x$ x", "none", ["1e51", " x"]),
        ("1e51$x$ x", "identifier", ["1e51$x$", "x"]),
        ("1xe'\\' x", "start", ["1x", "' x"]),
        ("1xe'\\' x", "identifier", ["1xe", "\\", "x"]),
    ],
)
def test_it_reads_what_follows_a_number_as_each_major_does(text, junk, tokens):
    assert [t.text for t in sql_tokens(text, junk=junk)] == tokens


def test_it_refuses_psql_variables_psql_sets_only_in_sql_psql_runs():
    (refusal,) = check_sql("SELECT :LAST_ERROR_MESSAGE;", field="s")
    assert "psql variable :LAST_ERROR_MESSAGE" in refusal.reason
    assert check_sql("SELECT a[1:2], x::int FROM t", field="s") == []
    assert check_script("SELECT :LAST_ERROR_MESSAGE;", field="s") == []
