"""Pasted pgbench text back into the lines pgbench printed.

Users keep pgbench output where they pasted it: a wiki, a README, an issue thread, a mail. On the
way it gains markup and loses line breaks, and the parsers (which classify each line on its own,
by its start) would not recognise it. :func:`unwrap_lines` undoes what pasting does:

* code fences (```` ``` ````, ``~~~``) and ``<pre>``/``<code>`` tags go, ``<br>`` breaks lines;
* quote markers (``>``, ``> >`` of mail and Markdown quotes) go;
* line numbers that a blog, a wiki or a terminal put before each line (``  1. ``, ``1 | ``,
  ``1:``, ``cat -n``'s ``     1<tab>``) go, when the lines are numbered consistently: one
  style, each number one more than the last, a block restarting at 1, and a jump only across an
  elision line (``...``, ``…``, ``[...]``) where the author cut;
* indentation added to the whole block (a Markdown code block: 2 to 8 spaces, or a tab) goes.
  pgbench's own indentation tells per-statement lines apart, so the indentation removed is the
  one of the nearest line that pgbench prints flush left (``tps = ``, ``number of clients:``...),
  and only from lines that carry it: prose around the paste and pgbench's own indentation stay;
* summary lines joined onto one line (``... duration: 120 s number of transactions actually
  processed: ...``) are split where each of pgbench's flush-left lines starts.

Text that pgbench wrote and nobody pasted has none of these, and comes back unchanged.
"""

from __future__ import annotations

import itertools
import re

# A shell prompt before a command: `$ `, `postgres@db1:~$ `, `[pg13@pg01 ~]$ ` (a bracketed
# prompt holds a space), `# `.
PROMPT = r"(?:(?:\[[^\]]*\]|\S*)[$#%>] ?)?"

_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[\w+.-]*[ \t]*$")
_TAG = re.compile(r"</?(?:pre|code|samp|tt)\b[^>]*>", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
# A line number and its separator: `  12. `, `12 | `, `12|`, `12:`, `    12<tab>`. A `.` needs
# a space after it, or `1.5 s` would read as line 1. A number alone is an empty line whose
# separator went with the trailing whitespace (`cat -n`'s tab).
_NUMBER = re.compile(
    r"^[ \t]*(?P<n>\d{1,6})(?:(?P<dot>\.)(?=[ \t]|$)|(?P<sep>:|[ \t]*\||\t|$))(?P<rest>.*)$"
)
_ELISION = re.compile(r"^[ \t]*(?:\.{3,}|…|\[(?:\.{3,}|…)\]|\((?:\.{3,}|…)\)|<snip>)[ \t]*$")

# The starts of the lines pgbench prints flush left (run and -i output), see the reference §3.
_FLUSH_LEFT = (
    r"pgbench \(|progress: |transaction type: |scaling factor: |partition method: |"
    r"partitions: |query mode: |number of (?:clients|threads|transactions|failed|serialization|"
    r"deadlock)|maximum number of tries: |total number of retries: |duration: \d|"
    r"latency (?:average|stddev)|rate limit schedule lag: |(?:initial|average) connection time = |"
    r"tps = |SQL script \d+: |script statistics:|statement latencies in milliseconds|"
    r"starting vacuum\.\.\.|creating tables\.\.\.|done in \d|dropping old tables\.\.\.|"
    r"generating data|vacuuming\.\.\.|creating primary keys\.\.\.|creating foreign keys\.\.\."
)
_MARKER = re.compile(rf"^(?P<indent>[ \t]*)(?:{_FLUSH_LEFT})")
# Where a joined line holds the next summary line: a flush-left start after a space, or right
# after the closing parenthesis of a `tps = ... (...)` line. The `tps = N (` form keeps the
# per-script `(..., tps = N)` of 9.6+ in one piece, and `initial connection time =` the
# `(without initial connection time)` of 14+.
_JOINED = re.compile(
    r"(?:(?<=\S)[ \t]+|(?<=\)))(?="
    r"(?:pgbench \(\d|progress: \d|transaction type: |scaling factor: \d|partition method: |"
    r"partitions: \d|query mode: |number of (?:clients|threads|transactions|failed|serialization|"
    r"deadlock)[a-z ]*: |number of transactions above the |maximum number of tries: |"
    r"total number of retries: |duration: \d|"
    r"latency (?:average|stddev)(?:: | = )|rate limit schedule lag: |"
    r"(?:initial|average) connection time = |tps = [-+\d.a-zA-Z]+ \(|SQL script \d+: |"
    r"statement latencies in milliseconds))"
)


def unwrap_lines(lines: list[str]) -> list[str]:
    """Return ``lines`` (already split and right-stripped) as pgbench printed them."""
    unquoted = [_QUOTE.sub("", _TAG.sub("", line)).rstrip() for line in lines]
    unfenced = ["" if _FENCE.match(line) else line for line in numbers_strip(unquoted)]
    dedented = _dedent(unfenced)
    split: list[str] = []
    for line in dedented:
        if line and line[0] not in " \t":
            split.extend(part.rstrip() for part in _JOINED.split(line))
        else:
            split.append(line)
    return split


def numbers_strip(lines: list[str]) -> list[str]:
    """``lines`` without the line numbers a renderer put before them, one line for each line.

    Lines come back unchanged unless at least two of them carry a number, all numbered lines
    carry the same separator, and each number is one more than the previous numbered line's,
    or 1 (the next code block of a page), or larger across an elision line (the author cut
    lines there). A list of figures or pgbench's own lines do not number that way.
    """
    numbered = [
        (index, match) for index, line in enumerate(lines) if (match := _NUMBER.match(line))
    ]
    separators = {_separator(match) for _, match in numbered} - {""}
    if len(numbered) < 2 or len(separators) != 1:
        return lines
    for (before, previous), (index, match) in itertools.pairwise(numbered):
        number, last = int(match["n"]), int(previous["n"])
        if number in (last + 1, 1):
            continue
        cut = any(_ELISION.match(_NUMBER.sub("", line)) for line in lines[before:index])
        if not (cut and number > last):
            return lines
    # One space after the separator is the renderer's when every numbered line has it; more is
    # the line's own indentation (pgbench's, or a code block's, dedented later).
    rests = [match["rest"] for _, match in numbered]
    spaced = all(rest[:1] in (" ", "\t") for rest in rests if rest)
    out = list(lines)
    for (index, _), rest in zip(numbered, rests, strict=True):
        out[index] = rest[1:] if spaced and rest else rest
    return out


def _separator(match: re.Match[str]) -> str:
    return match["dot"] or match["sep"].strip(" ") or match["sep"][-1:]


def break_lines(text: str) -> str:
    """``<br>`` tags of a pasted HTML fragment as the line breaks they stand for."""
    return _BREAK.sub("\n", text)


def _dedent(lines: list[str]) -> list[str]:
    first = next((m for m in map(_MARKER.match, lines) if m), None)
    indent = first["indent"] if first else ""
    out = []
    for line in lines:
        marker = _MARKER.match(line)
        if marker:
            indent = marker["indent"]
        out.append(line[len(indent) :] if indent and line.startswith(indent) else line)
    return out


_BANNER = re.compile(r"^pgbench \(\d")
_COMMAND = re.compile(rf"^{PROMPT}(?:\S*/)?pgbench +-")
_RESULTS = re.compile(r"(?:^|\s)(?:tps = |number of transactions actually processed: )")
_LEAD_IN = re.compile(r"^(?:progress: |starting vacuum|$)")


def runs_split(text: str) -> list[str]:
    """The runs of a text that holds several, one after another (a wiki page of results), each
    as it was pasted. A run starts at a banner, a ``pgbench -...`` command line or a
    ``transaction type:`` line that follows a results block (a banner also after another
    banner, a command line after another command line or a banner); the ``progress:`` and
    vacuum lines just before a ``transaction type:`` belong to the run it starts. A text of
    one run, in whatever order pgbench's two streams were captured, comes back whole."""
    lines = text.splitlines(keepends=True)
    # Numbers are stripped to classify the lines; the runs keep the text as it was pasted.
    plain = numbers_strip([_QUOTE.sub("", _TAG.sub("", raw)).rstrip() for raw in lines])
    starts = [0]
    results_seen = banner_seen = command_seen = False
    for index, raw in enumerate(plain):
        line = raw.strip()
        banner, command = bool(_BANNER.match(line)), bool(_COMMAND.match(line))
        # A command line comes before its banner: a banner after a command opens no new run.
        if (banner and (results_seen or banner_seen)) or (
            command and (results_seen or banner_seen or command_seen)
        ):
            starts.append(index)
            results_seen = banner_seen = command_seen = False
        elif results_seen and line.startswith("transaction type: "):
            start = index
            while start - 1 > starts[-1] and _LEAD_IN.match(plain[start - 1].strip()):
                start -= 1
            starts.append(start)
            results_seen = banner_seen = command_seen = False
        banner_seen, command_seen = banner_seen or banner, command_seen or command
        if _RESULTS.search(line):
            results_seen = True
    bounds = [*starts, len(lines)]
    parts = ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]
    return [part for part in parts if part.strip()]
