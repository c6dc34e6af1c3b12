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

SQL is read with a small lexer that follows psql's: quoted strings (standard, `E''`, `U&''`),
quoted identifiers, dollar quoting, `--` and nested `/* */` comments, so `'\\!'` in a string or a
comment is not a meta-command, and `$x$ \\! $x$` is not one either. Because
`standard_conforming_strings` changes how psql reads a backslash in a string, SQL is read both
ways and refused if either reading finds something.

A lexer cannot see SQL that is assembled at run time (`EXECUTE 'CO' || 'PY ...'`); that is why
the agent also runs job SQL as a database role that is not a superuser, and every job program as
an unprivileged OS user with an environment built from scratch (docs/security.md).

`job_code_check(workload=..., config_overrides=...)` takes the job's JSON as the API and the
claim carry it and returns every refusal, each naming the field (`workload.setup[0]`), the line
in that text and why. Standard library only: the server imports it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .overrides import override_reason
from .sqllex import Token, sql_tokens

# --- refusals ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """One thing the checker refuses: `field` is its path in the job, `line` 1-based in that
    text (0 when the field is not text with lines, e.g. a setting name)."""

    field: str
    line: int
    reason: str

    @property
    def message(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class JobCodeRefused(Exception):
    """A job the agent will not run; the message lists every refusal."""

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        self.refusals = list(refusals)
        super().__init__(refusals_text(self.refusals))


def refusals_text(refusals: Iterable[Refusal]) -> str:
    return "; ".join(str(refusal) for refusal in refusals)


# --- SQL ------------------------------------------------------------------------------------------

PSQL_META_REASON = (
    "psql meta-command {word}: setup SQL is run through psql, whose backslash commands run "
    "shell commands (\\!), read and write files (\\i, \\o, \\copy) and more; use plain SQL"
)
# pgbench's meta-commands that neither run programs nor touch files.
PGBENCH_META_ALLOWED = frozenset(
    {
        "\\set",
        "\\setrandom",
        "\\sleep",
        "\\if",
        "\\elif",
        "\\else",
        "\\endif",
        "\\gset",
        "\\aset",
        "\\startpipeline",
        "\\endpipeline",
        "\\syncpipeline",
    }
)
NESTING_LIMIT = 4


# What the agent replaces in job text before psql or pgbench reads it (streams.substitute:
# `{max_clients}` in setup, `{clients}` in level setup, `{n}` in a per-client script), always by
# a positive whole number.
PLACEHOLDER = re.compile(r"\{(?:n|clients|max_clients)\}")
# A pgbench variable reference in SQL (pgbench.c, parseVariable): pgbench replaces it in the SQL
# it sends without regard to quotes or comments, with text a `\gset` may have read.
PGBENCH_VARIABLE = re.compile(r"(?<!:):[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*")
REREAD_DOLLAR = (
    "{found} next to $: the number put in its place can open or close a dollar quote "
    "($q{{n}}$ becomes $q1$), so what runs is not what was checked"
)
REREAD_QUOTED = (
    "{found} inside a string, quoted name, comment or dollar quote: {who} replaces it there "
    "too, so what runs is not what was checked; put it in the SQL outside quotes"
)
CONTINUED_META = (
    "pgbench meta-command continued on the next line (a backslash at the end of the line): "
    "write it on one line"
)


def check_sql(text: str, *, field: str) -> list[Refusal]:
    """Refusals for SQL that the agent runs through psql (setup, level_setup)."""
    return _check(text, field=field, meta=_psql_meta, pgbench=False)


def check_script(text: str, *, field: str) -> list[Refusal]:
    """Refusals for a pgbench script: its SQL as for psql, and its meta-commands."""
    return _check(text, field=field, meta=_pgbench_meta, pgbench=True)


def _psql_meta(token: Token) -> str | None:
    return PSQL_META_REASON.format(word=token.text)


def _pgbench_meta(token: Token) -> str | None:
    word = token.text.lower()
    if word in ("\\shell", "\\setshell"):
        return f"pgbench {token.text} runs a shell command on the host"
    if word not in PGBENCH_META_ALLOWED:
        return (
            f"pgbench meta-command {token.text} is not allowed (allowed: "
            f"{', '.join(sorted(PGBENCH_META_ALLOWED))})"
        )
    return None


def _check(text: str, *, field: str, meta: Any, pgbench: bool) -> list[Refusal]:
    found: dict[tuple[int, str], Refusal] = {}
    for standard in (True, False):
        tokens = sql_tokens(text, standard_strings=standard)
        for token in tokens:
            if token.kind == "meta" and (reason := meta(token)):
                found.setdefault((token.line, reason), Refusal(field, token.line, reason))
        refused = _statements(text, standard=standard, depth=0, first_line=1)
        refused += _rereadings(text, tokens, pgbench=pgbench)
        for line, reason in refused:
            found.setdefault((line, reason), Refusal(field, line, reason))
    return sorted(found.values(), key=lambda r: (r.line, r.reason))


def _rereadings(text: str, tokens: list[Token], *, pgbench: bool) -> list[tuple[int, str]]:
    """(line, reason) for what would be read one way here and another way by psql or pgbench,
    because text is replaced after the check: the agent's placeholders, pgbench's variables,
    and pgbench meta-commands continued past their line.

    Outside quotes and comments, a number in place of a placeholder changes no token boundary
    except next to `$`; inside them (in a pgbench script) it is refused outright, and so is a
    pgbench variable, whose value is any text."""
    code = {token.start for token in tokens if token.kind == "other"}
    metas = [
        (token.start, _line_end(text, token.start)) for token in tokens if token.kind == "meta"
    ]

    def line(at: int) -> int:
        return text.count("\n", 0, at) + 1

    def in_meta(at: int) -> bool:
        return any(start <= at < end for start, end in metas)

    found: list[tuple[int, str]] = []
    who = "pgbench" if pgbench else "psql"
    for match in PLACEHOLDER.finditer(text):
        start, end = match.span()
        if text[start - 1 : start] == "$" or text[end : end + 1] == "$":
            found.append((line(start), REREAD_DOLLAR.format(found=match.group())))
        elif pgbench and start not in code and not in_meta(start):
            found.append((line(start), REREAD_QUOTED.format(found=match.group(), who="the agent")))
    if not pgbench:
        return found
    for match in PGBENCH_VARIABLE.finditer(text):
        if match.start() not in code and not in_meta(match.start()):
            reason = REREAD_QUOTED.format(found=f"pgbench variable {match.group()}", who=who)
            found.append((line(match.start()), reason))
    for start, end in metas:
        if text[start:end].rstrip("\r").endswith("\\"):
            found.append((line(start), CONTINUED_META))
    return found


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _statements(text: str, *, standard: bool, depth: int, first_line: int) -> list[tuple[int, str]]:
    """(line, reason) for each refused statement in SQL text, strings and bodies included."""
    tokens = sql_tokens(text, standard_strings=standard, first_line=first_line)
    found: list[tuple[int, str]] = []
    statement: list[Token] = []
    for token in [*tokens, Token("semicolon", ";", 0)]:
        if token.kind == "semicolon":
            if statement and (refused := _statement_reason(statement)):
                found.append(refused)
            statement = []
            continue
        statement.append(token)
        if token.kind == "string" and depth < NESTING_LIMIT and len(token.text) > 3:
            # A function body or an EXECUTE'd string is SQL too.
            found += _statements(
                token.text, standard=standard, depth=depth + 1, first_line=token.line
            )
    return found


def _statement_reason(statement: list[Token]) -> tuple[int, str] | None:
    """(line of the offending keyword, why) for a refused statement."""
    words = [t.text for t in statement if t.kind == "word"]
    if not words:
        return None
    first = _first_word(statement)
    for index, token in enumerate(statement):
        if token.kind != "word":
            continue
        if token.text == "copy":
            reason = _copy_reason(statement[index + 1 :])
            if reason:
                return token.line, reason
        if token.text == "alter" and _next_word(statement, index) == "system":
            return token.line, "ALTER SYSTEM changes the server's configuration for every later job"
        if token.text == "load" and index == first:
            return token.line, "LOAD loads a shared library into the server"
        # SET name, ALTER DATABASE|ROLE ... SET name, set_config('name', ...); not UPDATE's SET.
        setting = token.text == "set" and (index == first or words[0] == "alter")
        if setting or token.text == "set_config":
            name = _setting_after(statement, index)
            if name and (why := setting_reason(name)):
                return token.line, f"setting {name}: {why}"
    if words[0] == "alter" and _stores_defaults(words):
        return statement[first].line, (
            f"ALTER {words[1].upper()} ... SET stores session defaults that later sessions "
            "of the server start with, the agent's own included; use config_overrides"
        )
    return None


def _stores_defaults(words: list[str]) -> bool:
    """ALTER DATABASE|ROLE|USER ... SET|RESET: a default stored for later sessions."""
    return (
        len(words) > 2
        and words[1] in ("database", "role", "user")
        and ("set" in words[2:] or "reset" in words[2:])
    )


def _first_word(statement: list[Token]) -> int:
    return next(i for i, t in enumerate(statement) if t.kind == "word")


def _next_word(statement: list[Token], index: int) -> str:
    for token in statement[index + 1 :]:
        if token.kind == "word":
            return token.text
        if token.kind != "other":
            return ""
    return ""


def _setting_after(statement: list[Token], index: int) -> str:
    """The setting a SET (SET name, SET LOCAL name, ALTER ... SET name) or set_config('name')
    names, if the next tokens say it."""
    rest = statement[index + 1 : index + 5]
    for at, token in enumerate(rest):
        if token.kind == "word" and token.text in ("local", "session"):
            continue
        if token.kind in ("word", "identifier", "string"):
            return _dotted(token, statement[index + 2 + at : index + 4 + at])
        if token.text != "(":
            return ""
    return ""


def _dotted(first: Token, after: list[Token]) -> str:
    """A setting's name from its first token: `plperl.on_init` is three tokens."""
    name = first.text.lower()
    if len(after) == 2 and after[0].text == "." and after[1].kind in ("word", "identifier"):
        name += "." + after[1].text.lower()
    return name


def _copy_reason(rest: list[Token]) -> str | None:
    words = [t for t in rest if t.kind in ("word", "string")]
    for index, token in enumerate(words):
        if token.kind == "word" and token.text == "program":
            return "COPY ... PROGRAM runs a shell command on the host"
        if token.kind == "word" and token.text in ("to", "from"):
            following = words[index + 1] if index + 1 < len(words) else None
            if following is not None and following.kind == "string":
                return "COPY to or from a server file reads or writes files on the host"
    return None


# --- pgbench options ---------------------------------------------------------------------------

# Options that take a value (as the next item, attached, or after '=').
_SHORT_WITH_VALUE = frozenset("bcDFjLMPRstT")
_SHORT_FLAGS = frozenset("CdnNqrSv")
_LONG_WITH_VALUE = frozenset(
    {
        "builtin",
        "client",
        "define",
        "fillfactor",
        "jobs",
        "latency-limit",
        "protocol",
        "progress",
        "rate",
        "scale",
        "time",
        "transactions",
        "aggregate-interval",
        "sampling-rate",
        "max-tries",
        "random-seed",
        "partition-method",
        "partitions",
        "show-script",
    }
)
_LONG_FLAGS = frozenset(
    {
        "connect",
        "debug",
        "no-vacuum",
        "report-latencies",
        "report-per-command",
        "select-only",
        "skip-some-updates",
        "vacuum-all",
        "progress-timestamp",
        "failures-detailed",
        "verbose-errors",
        "exit-on-abort",
        "continue-on-error",
        "foreign-keys",
        "unlogged-tables",
        "quiet",
    }
)
_OPTION_REASONS = {
    "f": "reads a script file from the host; put the script in the workload's scripts",
    "file": "reads a script file from the host; put the script in the workload's scripts",
    "l": "writes a log file on the host",
    "log": "writes a log file on the host",
    "log-prefix": "names the log files pgbench writes on the host",
    "h": "connects pgbench to another server",
    "host": "connects pgbench to another server",
    "p": "connects pgbench to another server",
    "port": "connects pgbench to another server",
    "U": "connects pgbench as another user",
    "username": "connects pgbench as another user",
    "i": "initialises tables instead of measuring; use the job's scale and setup",
    "initialize": "initialises tables instead of measuring; use the job's scale and setup",
}
_REFUSED_WITH_VALUE = frozenset(
    {"f", "file", "log-prefix", "h", "host", "p", "port", "U", "username"}
)


def check_options(options: Sequence[str], *, field: str) -> list[Refusal]:
    """Refusals for pgbench options; only known harmless options pass (the list is in
    _SHORT_*/_LONG_*), so a pgbench that adds a file-writing option is refused by default."""
    refused: list[Refusal] = []
    index = 0
    while index < len(options):
        item = options[index]
        path = f"{field}[{index}]"
        name, takes_value, attached = _option(item)
        if name is None:
            refused.append(
                Refusal(path, 0, f"{item!r} is not an option: the agent names the database")
            )
        elif name in _OPTION_REASONS:
            refused.append(Refusal(path, 0, f"pgbench option {item}: {_OPTION_REASONS[name]}"))
            if name in _REFUSED_WITH_VALUE and not attached:
                index += 1  # its value
        elif takes_value is None:
            refused.append(Refusal(path, 0, f"pgbench option {item} is not one the agent allows"))
        elif takes_value and not attached:
            index += 1  # its value
        index += 1
    return refused


def _option(item: str) -> tuple[str | None, bool | None, bool]:
    """(option name, whether it takes a value (None: not allowed), value attached?)."""
    if item.startswith("--") and len(item) > 2:
        name, equals, _ = item[2:].partition("=")
        if name in _REFUSED_WITH_VALUE:
            return name, None, bool(equals)
        if name in _LONG_WITH_VALUE:
            return name, True, bool(equals)
        if name in _LONG_FLAGS and not equals:
            return name, False, False
        return name, None, False
    if item.startswith("-") and len(item) > 1:
        letter = item[1]
        if letter in _SHORT_WITH_VALUE:
            return letter, True, len(item) > 2
        if letter in _SHORT_FLAGS and len(item) == 2:
            return letter, False, False
        if letter in _REFUSED_WITH_VALUE:
            return letter, None, len(item) > 2
        return letter, None, False
    return None, None, False


# --- settings -----------------------------------------------------------------------------------

_SETTING_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"_command$"), "runs a shell command on the host"),
    # plperl.on_init, plperl.on_plperlu_init...: code run when an interpreter starts.
    (re.compile(r"(^|[._])on_\w*init$"), "runs code when the server starts an interpreter"),
    (re.compile(r"(^|_)librar(y|ies)$"), "loads a shared library into the server"),
    (re.compile(r"preload_libraries$"), "loads a shared library into the server"),
    (
        re.compile(r"^(dynamic_library_path|extension_control_path)$"),
        "says where the server loads code from",
    ),
    (re.compile(r"^jit_provider$"), "loads a shared library into the server"),
    (re.compile(r"^include"), "includes another configuration file"),
    (re.compile(r"_(file|dir|directory|directories|filename)$"), "names a file on the host"),
    (re.compile(r"_conninfo$"), "makes the server connect elsewhere"),
    (
        re.compile(r"^(listen_addresses|port|unix_socket_\w+)$"),
        "is the agent's connection to the server",
    ),
    (re.compile(r"^(data_directory|config_file|hba_file|ident_file)$"), "names a file on the host"),
)


def setting_reason(name: str) -> str | None:
    """Why a server setting may not come from a job, or None when it may."""
    key = name.strip().lower()
    for pattern, reason in _SETTING_RULES:
        if pattern.search(key):
            return reason
    return None


def check_settings(overrides: Mapping[str, Any], *, field: str) -> list[Refusal]:
    """Refusals for server setting overrides: a denied setting says why it is dangerous, any
    other setting outside the allowlist (overrides.py) that it is not on it."""
    return [
        Refusal(f"{field}.{name}", 0, f"setting {name} {why}")
        for name in overrides
        if (why := setting_reason(str(name)) or override_reason(str(name)))
    ]


# --- a whole job ----------------------------------------------------------------------------------


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
