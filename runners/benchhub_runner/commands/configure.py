"""``benchhub-runner configure --config FILE --server URL --token T``: write the agent's file.

Writes the TOML configuration readable by its owner alone (mode 0600, whatever the umask),
since it holds the runner token; the agent refuses to start with a token file that other users
may read. An existing file is replaced whole. ``--trust-job-code`` writes ``trust_job_code =
true``: only for a host whose owner accepts that every job from this server may run anything
on it (docs/security.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import ConfigError, config_write


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "configure",
        help="write the agent's configuration file (mode 0600)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", type=Path, required=True, help="the file to write")
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", required=True, help="runner token (bhr_...)")
    parser.add_argument("--host", help="default: this machine's hostname")
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--client-bindir", type=Path)
    parser.add_argument("--trust-job-code", action="store_true")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    values = {
        "server": args.server,
        "token": args.token,
        "host": args.host,
        "work_dir": str(args.work_dir) if args.work_dir else None,
        "client_bindir": str(args.client_bindir) if args.client_bindir else None,
        "trust_job_code": True if args.trust_job_code else None,
    }
    try:
        config_write(args.config, values)
    except (ConfigError, OSError) as exc:
        print(f"benchhub-runner configure: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.config} (mode 0600)")
    return 0
