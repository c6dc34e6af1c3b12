"""``benchhub-runner parse FILE [FILE ...]``: print parsed pgbench output as JSON.

One file prints one JSON object, several print a JSON array in argument order. The output is
all or nothing: if any file cannot be read or parsed, nothing goes to stdout, each problem is
reported on stderr as ``<file>: <what was missing>`` and the exit status is 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..parse import KINDS, PgbenchParseError, parse_text

EXIT_PARSE_ERROR = 2
# Larger inputs are not something pgbench writes in a run we would keep; refuse rather than
# exhaust the agent's memory.
MAX_BYTES = 512 * 1024 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="parse pgbench output files and print JSON",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", metavar="FILE", nargs="+", type=Path)
    parser.add_argument(
        "--kind",
        choices=("auto", *KINDS),
        default="auto",
        help="what the files hold (default: detect per file)",
    )
    parser.set_defaults(func=run)


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise PgbenchParseError(f"file larger than {MAX_BYTES} bytes")
        # pgbench writes ASCII plus whatever the server sent; never fail on odd bytes.
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise PgbenchParseError(f"cannot read file: {exc.strerror or exc}") from exc


def parse_file(path: Path, kind: str = "auto") -> dict[str, Any]:
    """Parse one file into JSON data; raises :class:`PgbenchParseError` only."""
    return parse_text(_read(path), kind).to_dict()  # type: ignore[arg-type]  # checked by argparse


def run(args: argparse.Namespace) -> int:
    results, failures = [], []
    for path in args.files:
        try:
            results.append(parse_file(path, args.kind))
        except PgbenchParseError as exc:
            failures.append(f"{path}: {exc}")
    if failures:
        for message in failures:
            print(f"benchhub-runner parse: {message}", file=sys.stderr)
        return EXIT_PARSE_ERROR
    document = results[0] if len(results) == 1 else results
    json.dump(document, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    return 0
