"""Properties of the job-code checker on generated pgbench scripts: what it accepts reads the same
after the agent's replacement of `{n}` as before it (so a dollar quote closed only by the
number cannot hide a `\\shell`), and text pgbench replaces inside quotes is refused."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchhub_runner.jobcode import check_script
from benchhub_runner.sqllex import sql_tokens
from benchhub_runner.streams import substitute

# Pieces that open, close or glue tokens, as psql's and pgbench's lexers read them.
FRAGMENTS = [
    "SELECT ",
    "1",
    ";",
    "\n",
    " ",
    "$q$",
    "$q1$",
    "$q2$",
    "$q12$",
    "$q{n}$",
    "{n}",
    "{n}$",
    "${n}",
    "foo",
    "t_",
    "'",
    "''",
    "E'",
    "\\'",
    '"',
    "--",
    "/*",
    "*/",
    ":x",
    "::int",
    "\\shell id\n",
    "\\set x 1\n",
    "\\set x :x + 1 \\\n",
    "$",
    "q",
    "$b$",
]
SCRIPTS = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)
WORDS = st.lists(st.sampled_from(["SELECT ", "1", " ", "foo", ", ", "\n", ";"]), max_size=6)


def metas(text: str) -> list[list[str]]:
    """The meta-commands of the text under both readings of backslashes in strings."""
    return [
        [t.text for t in sql_tokens(text, standard_strings=standard) if t.kind == "meta"]
        for standard in (True, False)
    ]


@settings(max_examples=600, deadline=None)
@given(SCRIPTS)
def test_it_accepts_only_scripts_that_read_the_same_after_the_agent_numbers_them(script):
    if check_script(script, field="s"):
        return
    for n in (1, 2, 12):
        numbered = substitute(script, n=n)
        assert metas(numbered) == metas(script), (script, numbered)
        assert check_script(numbered, field="s") == [], (script, numbered)


@settings(max_examples=200, deadline=None)
@given(
    WORDS.map("".join),
    st.sampled_from(["'{}'", "E'{}'", '"{}"', "$q${}$q$", "/* {} */", "-- {}\n"]),
    st.sampled_from([":x", ":aid", "{n}", ":ü"]),
    WORDS.map("".join),
)
def test_it_refuses_what_pgbench_or_the_agent_replaces_inside_quotes_or_comments(
    before, quoting, replaced, after
):
    script = before + " " + quoting.format(f"a {replaced} b") + after
    reasons = [refusal.reason for refusal in check_script(script, field="s")]
    assert any(replaced in reason and "inside a string" in reason for reason in reasons), script


def test_it_lets_variables_and_numbers_stand_where_sql_reads_them():
    script = "\\set x :scale * 2\nSELECT :aid, '12:30'::time, a::int FROM test{n} WHERE b = :x;"
    assert check_script(script, field="s") == []
