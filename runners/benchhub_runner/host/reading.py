"""Reading the host: a file's text or number and a short command's output, each tolerating what
a container hides (None instead of an error), and the `Key: value` text /proc is full of."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def run_command(argv: list[str]) -> str | None:
    """Run a short command; its stdout, or None if it cannot run or hangs.

    A non-zero exit still returns stdout: ``systemd-detect-virt`` prints "none" and exits 1.
    ``LC_ALL=C`` keeps lscpu's labels in English, which the parser depends on.
    """
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=10, env={**os.environ, "LC_ALL": "C"}
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def read_text(path: Path) -> str | None:
    """The file's text, or None if it is missing or unreadable (containers hide a lot of /sys)."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def read_int(path: Path) -> int | None:
    text = read_text(path)
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def parse_colon_pairs(text: str) -> dict[str, str]:
    """``Key: value`` lines (lscpu, /proc/meminfo, one /proc/cpuinfo block); first one wins."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in pairs:
            pairs[key.strip()] = value.strip()
    return pairs


def to_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
