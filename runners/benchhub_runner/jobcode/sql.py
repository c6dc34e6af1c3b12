"""The check of job SQL (setup and level setup, run through psql) and of pgbench scripts: read
with the lexer of psqlscan.l (sqllex.py) every way psql or a pgbench major may read it, and
refused where any reading finds a meta-command, a statement or a setting that reaches beyond
the throwaway server (the package's checker.py says what and why)."""

from __future__ import annotations

import re
from typing import Any

from .refusals import Refusal
from .settings import setting_reason
from .sqllex import JUNK_READINGS, Token, sql_tokens

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


# The control characters psql and pgbench read as some of them do and others do not: a lone
# carriage return ends a `--` comment for them and for few other tools, a vertical tab became
# a space in 17, a NUL ends pgbench's script; the rest are never needed in SQL.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]|\r(?!\n)")
CONTROL_REASON = (
    "control character {found}: psql and pgbench majors read it differently (a lone \\r ends "
    "a -- comment, \\v is a space only from 17, NUL ends a pgbench script); remove it, or "
    "write it in a string as E'\\x..' or chr()"
)
DOUBT_REASON = (
    "{found} next to a quote, $ or backslash: psql and pgbench read it as part of a name, "
    "not as a space, so a reader that differs would open or close a quote there; use an "
    "ASCII space, or quote the name"
)
# psql's own variables (all upper case) and the agent's -v ones: psql replaces `:NAME` with
# the value and reads the value as SQL, and some values come from the job (LAST_ERROR_MESSAGE).
PSQL_VARIABLE = re.compile(r"^:['\"]?(?:\{\?)?[A-Z_][A-Z0-9_]*['\"}]?$")
PSQL_VARIABLE_REASON = (
    "psql variable {found}: psql replaces it with its value and reads that as SQL, and a "
    "value (LAST_ERROR_MESSAGE) can hold a quote or a backslash command; write the value"
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

    def refuse(line: int, reason: str) -> None:
        found.setdefault((line, reason), Refusal(field, line, reason))

    for match in CONTROL.finditer(text):
        refuse(text.count("\n", 0, match.start()) + 1, _control_reason(match.group()))
    # Each reading psql or a pgbench major may make: standard_conforming_strings on and off,
    # what joins a number (sqllex.JUNK_READINGS), a string continued after a newline (pgbench)
    # or not (psql, line by line). Whatever any reading finds is refused.
    for standard in (True, False):
        for junk in JUNK_READINGS:
            for continued in (True, False):
                tokens = sql_tokens(text, standard_strings=standard, junk=junk, continued=continued)
                for line, reason in _token_reasons(tokens, meta=meta, pgbench=pgbench):
                    refuse(line, reason)
            tokens = sql_tokens(text, standard_strings=standard, junk=junk)
            refused = _statements(text, standard=standard, junk=junk, depth=0, first_line=1)
            refused += _rereadings(text, tokens, pgbench=pgbench)
            for line, reason in refused:
                refuse(line, reason)
    return sorted(found.values(), key=lambda r: (r.line, r.reason))


def _control_reason(found: str) -> str:
    return CONTROL_REASON.format(found=f"U+{ord(found[0]):04X}")


def _token_reasons(tokens: list[Token], *, meta: Any, pgbench: bool) -> list[tuple[int, str]]:
    """(line, reason) for meta-commands, for names the lexer cannot vouch for, and (for psql)
    for references to psql's own variables."""
    found: list[tuple[int, str]] = []
    for token in tokens:
        if token.kind == "meta" and (reason := meta(token)):
            found.append((token.line, reason))
        elif token.kind == "doubt":
            found.append((token.line, DOUBT_REASON.format(found=token.text)))
        elif token.kind == "variable" and not pgbench and PSQL_VARIABLE.match(token.text):
            found.append((token.line, PSQL_VARIABLE_REASON.format(found=token.text)))
    return found


def _rereadings(text: str, tokens: list[Token], *, pgbench: bool) -> list[tuple[int, str]]:
    """(line, reason) for what would be read one way here and another way by psql or pgbench,
    because text is replaced after the check: the agent's placeholders, pgbench's variables,
    and pgbench meta-commands continued past their line.

    Outside quotes and comments, a number in place of a placeholder changes no token boundary
    except next to `$`; inside them (in a pgbench script) it is refused outright, and so is a
    pgbench variable, whose value is any text."""
    code = {token.start for token in tokens if token.kind in ("other", "variable")}
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


def _statements(
    text: str, *, standard: bool, junk: str, depth: int, first_line: int
) -> list[tuple[int, str]]:
    """(line, reason) for each refused statement in SQL text, strings and bodies included."""
    tokens = sql_tokens(text, standard_strings=standard, junk=junk, first_line=first_line)
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
                token.text, standard=standard, junk=junk, depth=depth + 1, first_line=token.line
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
