"""What a job may bring to a host: a checker of its code, run by the server and by the agent.

Everything in a job that the agent executes is job code: setup and level_setup SQL (run through
psql), pgbench scripts (the workload's and its streams'), pgbench options and server setting
overrides. On a shared instance the person who queues a job is not the host's owner, so the
checker refuses what would reach beyond the throwaway server the agent starts for the job:

- psql meta-commands: any backslash command in setup or level_setup SQL (`\\!` runs a shell,
  `\\o` and `\\copy` write files, `\\i` reads them, `\\setenv`, `\\gexec`...);
- pgbench `\\shell` and `\\setshell`, and any pgbench meta-command that is not one of the
  harmless ones (`\\set`, `\\sleep`, `\\if`, `\\gset`, pipelines...);
- `COPY ... TO/FROM PROGRAM` and `COPY` to or from a server file, `ALTER SYSTEM`, `LOAD`,
  `ALTER DATABASE|ROLE|USER ... SET|RESET` (defaults that later sessions inherit), and
  `SET` of a setting refused below, in SQL and pgbench scripts, also inside string literals and
  dollar-quoted bodies (a `DO` block's `EXECUTE 'COPY ... PROGRAM ...'`);
- pgbench options that read or write files or connect elsewhere (`-f`, `-l`, `--log-prefix`,
  `-h`, `-p`, `-U`...): only a list of known harmless options is allowed;
- setting overrides outside an allowlist (overrides.py); and, in overrides and in SQL's SET,
  settings that run commands, load code or name files (`*.on_*init`, `*_command`, `*_library`,
  `*preload_libraries`, `dynamic_library_path`, `jit_provider`, `include*`, `*_file`,
  `*_directory`, `*_conninfo`, the socket and listen settings).

Text replaced after the check is refused where the replacement could change how psql or pgbench
reads it: an agent placeholder (`{n}`, `{clients}`, `{max_clients}`) next to `$` (a number there
can close a dollar quote, `$q{n}$` becoming `$q1$`), and in a pgbench script a placeholder or a
pgbench variable (`:name`, replaced by pgbench without regard to quotes) inside a string, quoted
name, comment or dollar quote, and a meta-command continued past its line.

SQL is read with a lexer that follows psqlscan.l, the lexer psql and pgbench share (sqllex.py):
quoted strings (standard, `E''`, `B''`, `X''`, `U&''`, continued after a newline), quoted
identifiers, dollar quoting, `--` comments (ended by `\\n` or `\\r`) and nested `/* */`
comments, so `'\\!'` in a string or a comment is not a meta-command, and `$x$ \\! $x$` is not
one either. What psql or a pgbench major may read differently is read every way, and refused
if any reading finds something: `standard_conforming_strings` on and off, and what joins a
number (`1E'\\'` is `1` and an `E''` string before 15, `1E` and a plain string later). What
the lexer cannot vouch for is refused with the line: control characters (a lone `\\r`, `\\v`,
NUL...) and a non-ASCII character next to a quote, `$` or backslash (psql and pgbench read
U+00A0 as part of a name, not as a space). The checker is a convenience that refuses early
with a clear message; the job's role, account and sandbox hold when it is wrong.

A lexer cannot see SQL that is assembled at run time (`EXECUTE 'CO' || 'PY ...'`); that is why
the agent also runs job SQL as a database role that is not a superuser, and every job program as
an unprivileged OS user with an environment built from scratch (docs/security.md).

`job_code_check(workload=..., config_overrides=...)` takes the job's JSON as the API and the
claim carry it and returns every refusal, each naming the field (`workload.setup[0]`), the line
in that text and why. Standard library only: the server imports it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .options import check_options
from .refusals import Refusal
from .settings import check_settings
from .sql import check_script, check_sql


def job_code_check(
    *, workload: Mapping[str, Any], config_overrides: Mapping[str, Any]
) -> list[Refusal]:
    """Every refusal for a job's code, as the job's JSON carries it (API request or claim)."""
    refused: list[Refusal] = []
    for key in ("setup", "level_setup"):
        for index, text in enumerate(_list(workload.get(key))):
            if isinstance(text, str):
                refused += check_sql(text, field=f"workload.{key}[{index}]")
    refused += _scripts(workload.get("scripts"), "workload.scripts")
    for index, stream in enumerate(_list(workload.get("streams"))):
        if isinstance(stream, Mapping):
            refused += _scripts(stream.get("scripts"), f"workload.streams[{index}].scripts")
    options = [o for o in _list(workload.get("options")) if isinstance(o, str)]
    refused += check_options(options, field="workload.options")
    refused += check_settings(config_overrides or {}, field="config_overrides")
    return refused


def _scripts(scripts: object, field: str) -> list[Refusal]:
    refused: list[Refusal] = []
    for index, script in enumerate(_list(scripts)):
        if isinstance(script, Mapping) and isinstance(script.get("body"), str):
            refused += check_script(script["body"], field=f"{field}[{index}].body")
    return refused


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []
