"""What each PostgreSQL major's pgbench and server accept: the first major of each option, script
syntax and SQL feature the catalog's workloads and the agent's command lines use.

Built from the release notes (https://www.postgresql.org/docs/release/) and the pgbench reference
page of each major; the pgbench options agree with the dated changelog of pgbench.c kept with the
output format notes the parser was written from. A check here is a fact of a release, not a
guess: an entry that uses a feature before its major cannot run there, and the test that walks
every catalog entry and major through the agent's builders says which.

Majors are (9, 2) .. (18, 0), as `pgbench.client_version` gives them. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Major = tuple[int, int]

# The majors BenchHub runs (the agent's parser reads 9.2 to 18).
MAJORS: tuple[Major, ...] = (
    (9, 2), (9, 3), (9, 4), (9, 5), (9, 6),
    (10, 0), (11, 0), (12, 0), (13, 0), (14, 0), (15, 0), (16, 0), (17, 0), (18, 0),
)  # fmt: skip

# pgbench command-line options (short and long) -> the first major that has them. Options every
# supported pgbench has (-c -j -M -T -t -r -n -f -S -N -h -p -U -l -C -s -i) are not listed.
PGBENCH_OPTIONS: dict[str, Major] = {
    "--aggregate-interval": (9, 3),
    "-P": (9, 4),
    "--progress": (9, 4),
    "-R": (9, 4),
    "--rate": (9, 4),
    "--sampling-rate": (9, 3),
    "-L": (9, 5),
    "--latency-limit": (9, 5),
    "-b": (9, 6),
    "--builtin": (9, 6),
    "--log-prefix": (10, 0),
    "--progress-timestamp": (9, 6),
    "-I": (11, 0),
    "--init-steps": (11, 0),
    "--random-seed": (11, 0),
    "--foreign-keys": (9, 3),
    "--show-script": (13, 0),
    "--partitions": (13, 0),
    "--partition-method": (13, 0),
    "--max-tries": (15, 0),
    "--failures-detailed": (15, 0),
    "--verbose-errors": (15, 0),
    "--exit-on-abort": (17, 0),
}

# pgbench script syntax -> (first major, major that removed it or None).
SCRIPT_SYNTAX: dict[str, tuple[re.Pattern[str], Major, Major | None]] = {
    "\\setrandom": (re.compile(r"^\s*\\setrandom\b", re.M), (9, 2), (10, 0)),
    "\\set with functions (random())": (
        re.compile(r"^\s*\\set\s+\w+\s+[^\n]*\(", re.M),
        (9, 6),
        None,
    ),
    "\\if": (re.compile(r"^\s*\\if\b", re.M), (11, 0), None),
    "\\gset": (re.compile(r"\\gset\b"), (12, 0), None),
    "\\aset": (re.compile(r"\\aset\b"), (13, 0), None),
    "\\startpipeline": (re.compile(r"^\s*\\startpipeline\b", re.M), (14, 0), None),
}
_WEIGHT = re.compile(r"@\d+$")

# SQL the server must know -> the first major that has it. Matched outside single-quoted
# literals (dynamic SQL run only where a guard allows it is not the setup's own).
SQL_FEATURES: dict[str, tuple[re.Pattern[str], Major]] = {
    "DO blocks": (re.compile(r"\bDO\s+(?:LANGUAGE\s+\w+\s+)?\$", re.I), (9, 0)),
    "CREATE EXTENSION": (re.compile(r"\bCREATE\s+EXTENSION\b", re.I), (9, 1)),
    "CREATE ... IF NOT EXISTS (table)": (
        re.compile(r"\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+IF\s+NOT\s+EXISTS\b", re.I),
        (9, 1),
    ),
    "UNLOGGED tables": (re.compile(r"\bUNLOGGED\b", re.I), (9, 1)),
    "format()": (re.compile(r"\bformat\s*\(", re.I), (9, 1)),
    "to_regclass() / to_regproc()": (re.compile(r"\bto_reg(?:class|proc|type)\s*\(", re.I), (9, 4)),
    "jsonb": (re.compile(r"\bjsonb\b", re.I), (9, 4)),
    "BRIN indexes": (re.compile(r"\bUSING\s+brin\b", re.I), (9, 5)),
    "INSERT ... ON CONFLICT": (re.compile(r"\bON\s+CONFLICT\b", re.I), (9, 5)),
    "CREATE INDEX / SEQUENCE IF NOT EXISTS": (
        re.compile(r"\bCREATE\s+(?:UNIQUE\s+)?(?:INDEX|SEQUENCE)\s+IF\s+NOT\s+EXISTS\b", re.I),
        (9, 5),
    ),
    "declarative partitioning": (re.compile(r"\bPARTITION\s+(?:BY|OF)\b", re.I), (10, 0)),
    "identity columns": (re.compile(r"\bGENERATED\s+(?:ALWAYS|BY\s+DEFAULT)\b", re.I), (10, 0)),
    "procedures": (
        re.compile(r"\b(?:CREATE\s+(?:OR\s+REPLACE\s+)?PROCEDURE|CALL)\b", re.I),
        (11, 0),
    ),
    "gen_random_uuid() in core": (re.compile(r"\bgen_random_uuid\s*\(", re.I), (13, 0)),
}

_LITERAL = re.compile(r"'(?:[^']|'')*'")


def label(major: Major) -> str:
    """9.4 for (9, 4), 13 for (13, 0)."""
    return f"{major[0]}.{major[1]}" if major[0] < 10 else str(major[0])


def option_problems(argv: Iterable[str], major: Major) -> list[str]:
    """Each option of a pgbench command line that pgbench `major` does not have, and a script
    weight (`-f file@2`, 9.6+)."""
    problems, previous = [], ""
    for arg in argv:
        name = arg.partition("=")[0]
        since = PGBENCH_OPTIONS.get(name)
        if since is not None and major < since:
            problems.append(f"pgbench {label(major)} has no {name} (since {label(since)})")
        if previous == "-f" and _WEIGHT.search(arg) and major < (9, 6):
            problems.append(f"pgbench {label(major)} has no script weights (since 9.6)")
        previous = arg
    return problems


def script_problems(script: str, major: Major) -> list[str]:
    """Each piece of pgbench script syntax that pgbench `major` does not read."""
    problems = []
    for what, (pattern, since, removed) in SCRIPT_SYNTAX.items():
        if not pattern.search(script):
            continue
        if major < since:
            problems.append(f"pgbench {label(major)} does not read {what} (since {label(since)})")
        elif removed is not None and major >= removed:
            problems.append(
                f"pgbench {label(major)} no longer reads {what} (removed in {label(removed)})"
            )
    return problems


def sql_problems(sql: str, major: Major) -> list[str]:
    """Each SQL feature of `sql` (outside single-quoted literals) that server `major` lacks."""
    code = _LITERAL.sub("''", sql)
    return [
        f"PostgreSQL {label(major)} has no {what} (since {label(since)})"
        for what, (pattern, since) in SQL_FEATURES.items()
        if major < since and pattern.search(code)
    ]
