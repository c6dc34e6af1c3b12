"""``benchhub-runner spool``: the runs waiting in the spool and the runs it set aside.

Lists the runs waiting for the server, then each run set aside (the server refused it as
invalid, or failed on it ``spool_max_tries`` times) with the server's answer. ``--retry UUID``
puts a set-aside run back in the queue, to be sent with the next flush (after the server was
fixed). ``--json`` prints the same as JSON. The spool is ``<work_dir>/spool``; the work directory
comes from ``--work-dir``, else the ``--config`` file's ``work_dir``, else the default.
Exit status: 0, or 2 when ``--retry`` names no set-aside run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tomllib
from pathlib import Path

from ..config import default_work_dir
from ..transport.spool import Spool


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "spool",
        help="list runs waiting for the server and runs set aside, with its answers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", type=Path, help="agent TOML file (for its work_dir)")
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--retry", metavar="UUID", help="send this set-aside run again")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def _work_dir(args: argparse.Namespace) -> Path:
    if args.work_dir is not None:
        return Path(args.work_dir)
    if args.config is not None:
        try:
            values = tomllib.loads(args.config.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            values = {}
        if values.get("work_dir"):
            return Path(values["work_dir"])
    return default_work_dir()


def run(args: argparse.Namespace) -> int:
    spool = Spool(_work_dir(args) / "spool")
    if args.retry:
        if not spool.retry(args.retry):
            print(f"benchhub-runner spool: no set-aside run {args.retry}", file=sys.stderr)
            return 2
        print(f"run {args.retry} is back in the spool; the agent sends it with its next flush")
        return 0
    waiting = [path.stem for path in spool.pending()]
    set_aside = spool.set_aside()
    if args.json:
        out = {"waiting": waiting, "set_aside": [dataclasses.asdict(s) for s in set_aside]}
        print(json.dumps(out, indent=2))
        return 0
    print(f"{len(waiting)} run(s) waiting for the server in {spool.directory}")
    for name in waiting:
        print(f"  {name}")
    print(f"{len(set_aside)} run(s) set aside in {spool.rejected_dir}")
    for entry in set_aside:
        answer = f"{entry.status or '?'} {entry.error}".strip()
        print(f"  {entry.run_uuid}  {entry.set_aside_at}  after {entry.tries} tries: {answer}")
        if entry.detail:
            print(f"      {entry.detail}")
    return 0
