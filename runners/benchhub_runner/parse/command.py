"""A ``pgbench`` command line pasted above its output (``$ pgbench -c 52 -j 52 -T 120 db``).

Pasted outputs often start with the command that made them and lose the header that pgbench
printed. The command's options then tell what the header would have: clients, threads,
duration, transactions per client, the builtin script and the query mode. They fill only the
fields the output leaves empty: what pgbench printed wins.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from .pasted import PROMPT
from .run_model import RunOutput

_COMMAND = re.compile(rf"^{PROMPT}(?:\S*/)?pgbench(?:\.exe)? +(?P<args>-.*)$")
_BUILTINS = {
    "-S": "<builtin: select only>",
    "--select-only": "<builtin: select only>",
    "-N": "<builtin: simple update>",
    "--skip-some-updates": "<builtin: simple update>",
}
_BUILTIN_NAMES = {
    "select-only": "<builtin: select only>",
    "simple-update": "<builtin: simple update>",
    "tpcb-like": "<builtin: TPC-B (sort of)>",
}
# option -> (field, long form)
_INT_OPTIONS = {
    "-c": ("clients", "--client"),
    "-j": ("threads", "--jobs"),
    "-T": ("duration_s", "--time"),
    "-t": ("transactions_per_client", "--transactions"),
}
_LONG = {long: (short, field) for short, (field, long) in _INT_OPTIONS.items()}


@dataclass
class CommandLine:
    """What a pasted pgbench command line says; ``None`` where it does not say."""

    clients: int | None = None
    threads: int | None = None
    duration_s: int | None = None
    transactions_per_client: int | None = None
    transaction_type: str | None = None
    query_mode: str | None = None

    def fill(self, out: RunOutput) -> None:
        """Set the fields of ``out`` that the output left empty."""
        for name in (
            "clients",
            "threads",
            "duration_s",
            "transactions_per_client",
            "transaction_type",
            "query_mode",
        ):
            if getattr(out, name) is None and getattr(self, name) is not None:
                setattr(out, name, getattr(self, name))


def command_line_parse(line: str) -> CommandLine | None:
    """The options of a ``pgbench ...`` benchmark command line; ``None`` for any other line
    (``pgbench -i`` initialises and is not the run's command)."""
    match = _COMMAND.match(line.strip())
    if match is None:
        return None
    try:
        words = shlex.split(match["args"], comments=True)
    except ValueError:
        words = match["args"].split()
    if any(w in ("-i", "--initialize") for w in words):
        return None
    command = CommandLine()
    for index, word in enumerate(words):
        _option(command, word, words[index + 1] if index + 1 < len(words) else "")
    return command


def _option(command: CommandLine, word: str, following: str) -> None:
    if word in _BUILTINS:
        command.transaction_type = _BUILTINS[word]
        return
    name, _, value = word.partition("=")
    if name in ("-b", "--builtin") and (value or following) in _BUILTIN_NAMES:
        command.transaction_type = _BUILTIN_NAMES[value or following]
    elif name in ("-M", "--protocol") and (value or following) in (
        "simple",
        "extended",
        "prepared",
    ):
        command.query_mode = value or following
    elif name in _LONG and (number := _small_int(value or following)) is not None:
        setattr(command, _LONG[name][1], number)
    elif word[:2] in _INT_OPTIONS and (number := _small_int(word[2:] or following)) is not None:
        setattr(command, _INT_OPTIONS[word[:2]][0], number)


def _small_int(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None
