"""A lexer of SQL as psql and pgbench read it, for the job-code checker (checker.py).

It follows psqlscan.l (src/fe_utils), the lexer psql and pgbench share, rule for rule where a
rule decides what is code and what is quoted: strings (`''`, `E''` with backslash escapes,
`B''`, `X''`, `N''`, `U&''`, and a plain string read with backslash escapes when
standard_conforming_strings is off), a string continued after a newline (`'a'` newline `'b'`
is one literal that keeps its first part's escaping), quoted identifiers, dollar quoting,
`--` comments (ended by `\\n` or `\\r`) and nested `/* */` comments, psql variable
references (`:name`, `:'name'`, `:"name"`), `\\;` and `\\:` (not commands), and the
characters a name is made of: ASCII letters, digits, `_`, `$` and every byte >= 0x80 (so a
U+00A0 or U+0085 is part of a name, not a space).

One thing changed between majors: what follows a number. `junk` picks the reading:

- "none" (10 to 14): `1e` gives its `e` back, so `1e'\\'` is `1` and an `E''` string;
- "start" (15.0 to 15.8, 16.0 to 16.4): one letter after a number joins it (`1e`), and
  `1xe'` is `1x` and an `E''` string;
- "identifier" (15.9, 16.5 and later, 17, 18): a whole name after a number joins it (`1e`,
  `1e$q$`, `0x1`, `1_000`), so `1e'\\'` is `1e` and a plain string.

The checker reads a text every way and refuses what any reading finds. A meta-command (a
backslash outside all quotes and comments) takes the rest of its line. Standard library
only; lexes `str`, where every non-ASCII character stands for its UTF-8 bytes, all >= 0x80.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

JUNK_READINGS = ("none", "start", "identifier")

_IDENT_START = re.compile(r"[A-Za-z_\x80-\U0010ffff]")
_IDENT = re.compile(r"[A-Za-z_\x80-\U0010ffff][A-Za-z_0-9$\x80-\U0010ffff]*")
_DOLLAR = re.compile(r"\$([A-Za-z_\x80-\U0010ffff][A-Za-z_0-9\x80-\U0010ffff]*)?\$")
_PARAM = re.compile(r"\$[0-9]+")
_NUMBER_START = re.compile(r"\.?[0-9]")
_REAL_FAIL_SIGNED = re.compile(r"[Ee][-+](?![0-9])")
# The integer, decimal and real that start at a number, each of which may take a name after
# it; `1..` is the integer 1 and `..` (decimalfail).
_NUMBER_PARTS = (
    re.compile(r"[0-9]+"),
    re.compile(r"[0-9]+\.(?!\.)[0-9]*|\.[0-9]+"),
    re.compile(r"(?:[0-9]+\.(?!\.)[0-9]*|\.[0-9]+|[0-9]+)[Ee][-+]?[0-9]+"),
)


def _number_parts(text: str, i: int) -> list[re.Match[str]]:
    return [m for pattern in _NUMBER_PARTS if (m := pattern.match(text, i))]


_VARIABLE = re.compile(
    r":(?:'[A-Za-z0-9_\x80-\U0010ffff]+'|\"[A-Za-z0-9_\x80-\U0010ffff]+\"|"
    r"\{\?[A-Za-z0-9_\x80-\U0010ffff]+\}|[A-Za-z0-9_\x80-\U0010ffff]+)"
)
# What ends a string and may continue it: whitespace holding a newline, then a quote.
_QUOTE_CONTINUE = re.compile(
    r"(?:[ \t\f\v]|--[^\n\r]*)*[\n\r](?:[ \t\n\r\f\v]+|--[^\n\r]*[\n\r])*'"
)
_SPACE = " \t\n\r\f\v"
_WORD_END = re.compile(r"[ \t\n\r\f\v]")
# Text next to which a non-ASCII character changes how a reader that takes it for a space
# would read on: a quote, a dollar quote, a backslash.
_NEAR_NON_ASCII = "'\"$\\"
_NON_ASCII_NEAR = re.compile(r"[^\x00-\x7f]\$|\$[^\x00-\x7f]")


@dataclass(frozen=True)
class Token:
    """`kind`: word (unquoted identifier or keyword, lower-cased in `text`), string (a literal's
    or dollar-quoted body's content), identifier (a quoted name), meta (a backslash command,
    e.g. `\\!`), variable (a psql variable reference, `:name`, `:'name'`...), semicolon,
    other, doubt (code this lexer cannot vouch for; `text` says
    why)."""

    kind: str
    text: str
    line: int
    start: int = 0  # offset of its first character in the text read


def sql_tokens(
    text: str,
    *,
    standard_strings: bool = True,
    junk: str = "identifier",
    continued: bool = True,
    first_line: int = 1,
) -> list[Token]:
    """The tokens of SQL as psql and pgbench read it; comments and whitespace are dropped.

    `continued`: a string continues after a newline (`'a'` newline `'b'`), as pgbench reads
    a whole script; psql lexes a file line by line and never sees the newline, so for it
    `E'a'` newline `'\\'` is two strings.

    A meta-command token holds its backslash word (up to the next space); the rest of its
    line is its arguments, so the lexer goes on after the line's end.
    """
    lexer = _Lexer(text, standard_strings=standard_strings, junk=junk, first_line=first_line)
    lexer.continued = continued
    return lexer.run()


class _Lexer:
    def __init__(self, text: str, *, standard_strings: bool, junk: str, first_line: int) -> None:
        assert junk in JUNK_READINGS, junk
        self.text, self.standard, self.junk = text, standard_strings, junk
        self.first_line = first_line
        self.continued = True
        self.newlines = [at for at, ch in enumerate(text) if ch == "\n"]
        self.tokens: list[Token] = []

    def line(self, at: int) -> int:
        return self.first_line + bisect.bisect_left(self.newlines, at)

    def emit(self, kind: str, text: str, start: int) -> None:
        self.tokens.append(Token(kind, text, self.line(start), start))

    def run(self) -> list[Token]:
        i, n = 0, len(self.text)
        while i < n:
            i = self.step(i)
        return self.tokens

    def step(self, i: int) -> int:
        text, ch = self.text, self.text[i]
        if ch in _SPACE:
            return i + 1
        if text.startswith("--", i):
            return _comment_end(text, i)
        if text.startswith("/*", i):
            return _block_comment(text, i)
        if ch == "\\":
            return self.backslash(i)
        if ch == "'":
            return self.string(i, i + 1, backslash=not self.standard)
        if ch in "eE" and text.startswith("'", i + 1):
            return self.string(i, i + 2, backslash=True)
        if ch in "bBxX" and text.startswith("'", i + 1):
            return self.string(i, i + 2, backslash=False, doubling=False)
        if ch in "uU" and text.startswith("&'", i + 1):
            return self.string(i, i + 3, backslash=False)
        if ch in "uU" and text.startswith('&"', i + 1):
            return self.quoted_name(i, i + 3)
        if ch == '"':
            return self.quoted_name(i, i + 1)
        if ch == "$":
            return self.dollar(i)
        if _NUMBER_START.match(text, i):
            return self.number(i)
        if ch == ":":
            return self.colon(i)
        if _IDENT_START.match(ch):
            return self.word(i)
        self.emit("semicolon" if ch == ";" else "other", ch, i)
        return i + 1

    def backslash(self, i: int) -> int:
        if self.text[i + 1 : i + 2] in (";", ":"):
            # psql's `\;` and `\:` put the character in the query: no command.
            self.emit("other", self.text[i + 1], i)
            return i + 2
        word = _WORD_END.search(self.text, i + 1)
        self.emit("meta", self.text[i : word.start() if word else len(self.text)], i)
        end = self.text.find("\n", i)
        return len(self.text) if end < 0 else end

    def string(self, start: int, i: int, *, backslash: bool, doubling: bool = True) -> int:
        """A literal whose body starts at text[i]; a continuation after a newline keeps its
        escaping (psqlscan's xqs state)."""
        text, n, body = self.text, len(self.text), []
        while i < n:
            ch = text[i]
            if backslash and ch == "\\" and i + 1 < n:
                body.append(text[i + 1])
                i += 2
            elif ch != "'":
                body.append(ch)
                i += 1
            elif doubling and text.startswith("'", i + 1):
                body.append("'")
                i += 2
            elif self.continued and (more := _QUOTE_CONTINUE.match(text, i + 1)):
                i = more.end()
            else:
                self.emit("string", "".join(body), start)
                return i + 1
        self.emit("string", "".join(body), start)
        return n  # unterminated: the rest is the literal, as psql would wait for more

    def quoted_name(self, start: int, i: int) -> int:
        text, n, body = self.text, len(self.text), []
        while i < n:
            if text[i] != '"':
                body.append(text[i])
                i += 1
            elif text.startswith('"', i + 1):
                body.append('"')
                i += 2
            else:
                break
        self.emit("identifier", "".join(body), start)
        return min(i + 1, n)

    def dollar(self, i: int) -> int:
        text = self.text
        if opened := _DOLLAR.match(text, i):
            delimiter = opened.group(0)
            close = text.find(delimiter, opened.end())
            end = len(text) if close < 0 else close + len(delimiter)
            self.emit("string", text[opened.end() : len(text) if close < 0 else close], i)
            return end
        if param := _PARAM.match(text, i):
            end = self.junk_end(param.end())
            self.emit("other", text[i:end], i)
            return end
        # `$name` with no closing `$` (dolqfailed): the `$` alone, then a name.
        self.emit("other", "$", i)
        return i + 1

    def number(self, i: int) -> int:
        """A number, as flex picks it: the longest match of any rule, so in the "identifier"
        reading `1e51$x$` is `1` and the name `e51$x$` (integer_junk), not the real `1e51`."""
        text = self.text
        parts = _number_parts(text, i)
        end = max(part.end() for part in parts)
        if fail := _REAL_FAIL_SIGNED.match(text, end):
            # realfail (`1e+`): no name joins it, however a major splits it.
            self.emit("other", text[i : fail.end()], i)
            return fail.end()
        end = max(self.junk_end(part.end()) for part in parts)
        self.emit("other", text[i:end], i)
        return end

    def junk_end(self, end: int) -> int:
        """Where a number or parameter ending at `end` ends once the reading joins what
        follows it."""
        if self.junk == "start" and _IDENT_START.match(self.text, end):
            return end + 1
        if self.junk == "identifier" and (name := _IDENT.match(self.text, end)):
            return name.end()
        return end

    def colon(self, i: int) -> int:
        text = self.text
        if text.startswith("::", i):
            self.emit("other", "::", i)
            return i + 2
        if variable := _VARIABLE.match(text, i):
            # A psql variable reference is one token: `:a$q$` opens a dollar quote after it.
            self.emit("variable", variable.group(0), i)
            return variable.end()
        self.emit("other", ":", i)
        return i + 1

    def word(self, i: int) -> int:
        match = _IDENT.match(self.text, i)
        assert match
        end = match.end()
        name = self.text[i:end]
        if doubt := _non_ascii_doubt(name, self.text[end : end + 1]):
            self.emit("doubt", doubt, i)
        self.emit("word", name.lower(), i)
        return end


def _non_ascii_doubt(name: str, after: str) -> str:
    """The non-ASCII character of a name that sits next to `$`, or ends the name just before
    a quote or backslash, as `U+00A0`; "" when there is none. A reader that took it for a
    space would open or close a quote there."""
    found = _NON_ASCII_NEAR.search(name)
    if found:
        ch = next(c for c in found.group(0) if not c.isascii())
    elif after and after in _NEAR_NON_ASCII and not name[-1].isascii():
        ch = name[-1]
    else:
        return ""
    return f"U+{ord(ch):04X}"


def _comment_end(text: str, i: int) -> int:
    """A `--` comment ends before `\\n` or `\\r` (psqlscan's non_newline)."""
    found = re.compile(r"[\n\r]").search(text, i)
    return found.start() if found else len(text)


def _block_comment(text: str, i: int) -> int:
    """Skip a /* */ comment, nested as PostgreSQL nests them; returns its end."""
    depth, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return n
