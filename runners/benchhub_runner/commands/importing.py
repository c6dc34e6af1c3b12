"""``benchhub-runner import FILE ... --server URL --token T --version V --host NAME``.

Uploads historical pgbench outputs as one run: one file per pgbench execution, client levels
from the outputs themselves, several files at one level as its repeats. Files may be pasted text
(indented, quoted, joined lines, a tail, a cut header); what they do not say is refused by name,
and ``--version``, ``--clients`` and ``--workload`` give it. ``--config`` adds the
server's postgresql.conf, ``--lscpu`` the host's CPU facts. The token is a personal one (bhp_)
or the host's runner token. Exit status: 0 stored (the run's URL is printed), 2 the files do not
make a run, 3 the server refused it (its reasons are printed), 4 the server is unreachable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..results.importer import ImportRefused, import_payload
from ..transport.client import ApiError, Client, Unreachable


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import",
        help="upload historical pgbench outputs as a run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", metavar="FILE", nargs="+", type=Path)
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument(
        "--version", default="", help="the server version, e.g. 13.3 (else the banner's)"
    )
    parser.add_argument(
        "--clients",
        type=int,
        help="the number of clients of every file that does not say its own (a tail, a cut)",
    )
    parser.add_argument(
        "--workload", default="", help="a builtin's name or one's own, if no file names it"
    )
    parser.add_argument("--host", required=True, help="the host's name")
    parser.add_argument("--config", type=Path, help="the server's postgresql.conf")
    parser.add_argument("--lscpu", type=Path, help="the host's lscpu output")
    parser.add_argument("--dry-run", action="store_true", help="print the upload, send nothing")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        payload = import_payload(
            paths=args.files,
            version=args.version,
            host=args.host,
            config=args.config,
            lscpu=args.lscpu,
            clients=args.clients,
            workload=args.workload,
        )
    except (ImportRefused, OSError) as exc:
        print(f"benchhub-runner import: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(json.dumps(payload, indent=2))
        return 0
    try:
        client = Client(server=args.server, token=args.token)
        stored = client.upload(payload)
    except ValueError as exc:
        print(f"benchhub-runner import: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"benchhub-runner import: the server refused the run: {exc}", file=sys.stderr)
        for field, messages in (exc.body.get("fields") or {}).items():
            print(f"  {field}: {' '.join(messages)}", file=sys.stderr)
        return 3
    except Unreachable as exc:
        print(f"benchhub-runner import: {exc}", file=sys.stderr)
        return 4
    levels = ", ".join(str(c) for c in payload["clients"])
    print(
        f"{args.server.rstrip('/')}{stored['url']} ({len(payload['results'])} results at "
        f"clients {levels})"
    )
    return 0
