"""A small lexer of SQL as psql (and pgbench) reads it, for the job-code checker (jobcode.py).

It follows psql's psqlscan.l where that decides what is code: quoted strings (standard, `E''`
with backslash escapes, and, with `standard_strings=False`, backslash escapes in plain strings as
under standard_conforming_strings=off), quoted identifiers, dollar quoting (`$$`, `$tag$`; an
identifier may hold `$`, so `foo$bar$` opens nothing), `--` comments and nested `/* */` comments.
A backslash outside all of those starts a meta-command (psql's `\\!`, pgbench's `\\shell`), whose
arguments are the rest of its line. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENT_START = re.compile(r"[A-Za-z_\x80-\U0010ffff]")
_IDENT_CONT = re.compile(r"[A-Za-z_0-9$\x80-\U0010ffff]*")
_DOLLAR = re.compile(r"\$([A-Za-z_\x80-\U0010ffff][A-Za-z_0-9\x80-\U0010ffff]*)?\$")
_META_WORD = re.compile(r"\\([A-Za-z]+|[^A-Za-z\s]?)")


@dataclass(frozen=True)
class Token:
    """`kind`: word (unquoted identifier or keyword, lower-cased in `text`), string (a literal's
    or dollar-quoted body's content), meta (a backslash command, e.g. `\\!`), semicolon, other."""

    kind: str
    text: str
    line: int
    start: int = 0  # offset of its first character in the text read


def sql_tokens(text: str, *, standard_strings: bool = True, first_line: int = 1) -> list[Token]:
    """The tokens of SQL as psql reads it; comments and whitespace are dropped.

    A meta-command token holds its backslash word; psql takes the rest of its line as arguments,
    so the lexer skips to the end of the line after it.
    """
    tokens: list[Token] = []
    i, line, n = 0, first_line, len(text)
    while i < n:
        ch = text[i]
        start, start_line = i, line
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            i, line = _block_comment(text, i, line)
        elif ch == "\\":
            word = _META_WORD.match(text, i)
            meta = word.group(0) if word else "\\"
            tokens.append(Token("meta", meta, start_line, start))
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch in "eE" and text.startswith("'", i + 1):
            body, end = _quoted(text, i + 1, "'", backslash=True)
            line += text.count("\n", i, end)
            i = end
            tokens.append(Token("string", body, start_line, start))
        elif ch == "'":
            body, end = _quoted(text, i, "'", backslash=not standard_strings)
            line += text.count("\n", i, end)
            i = end
            tokens.append(Token("string", body, start_line, start))
        elif ch == '"':
            body, end = _quoted(text, i, '"', backslash=False)
            line += text.count("\n", i, end)
            i = end
            tokens.append(Token("identifier", body, start_line, start))
        elif ch == "$" and (dollar := _DOLLAR.match(text, i)):
            delimiter = dollar.group(0)
            close = text.find(delimiter, dollar.end())
            end = n if close < 0 else close + len(delimiter)
            body = text[dollar.end() : n if close < 0 else close]
            line += text.count("\n", i, end)
            i = end
            tokens.append(Token("string", body, start_line, start))
        elif _IDENT_START.match(ch):
            word = _IDENT_CONT.match(text, i + 1)
            end = word.end() if word else i + 1
            tokens.append(Token("word", text[i:end].lower(), start_line, start))
            i = end
        elif ch == ";":
            tokens.append(Token("semicolon", ";", start_line, start))
            i += 1
        else:
            tokens.append(Token("other", ch, start_line, start))
            i += 1
    return tokens


def _block_comment(text: str, i: int, line: int) -> tuple[int, int]:
    """Skip a /* */ comment, nested as PostgreSQL nests them; returns (end, line)."""
    depth, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i, line
        else:
            line += text[i] == "\n"
            i += 1
    return n, line


def _quoted(text: str, i: int, quote: str, *, backslash: bool) -> tuple[str, int]:
    """The content of a quoted literal starting at text[i] == quote (doubled quotes and, with
    `backslash`, backslash escapes undone), and the index after its closing quote."""
    out: list[str] = []
    i += 1
    n = len(text)
    while i < n:
        ch = text[i]
        if backslash and ch == "\\" and i + 1 < n:
            out.append(text[i + 1])
            i += 2
        elif ch == quote:
            if text.startswith(quote, i + 1):
                out.append(quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), n  # unterminated: the rest is the literal, as psql would wait for more
