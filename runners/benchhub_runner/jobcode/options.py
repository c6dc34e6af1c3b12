"""The check of a workload's pgbench options: only known harmless options pass; those that
read or write files or connect elsewhere are refused with why."""

from __future__ import annotations

from collections.abc import Sequence

from .refusals import Refusal

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
