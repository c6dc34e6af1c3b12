"""``benchhub-runner run`` and ``benchhub-runner once``: work the queue of a BenchHub server.

``run`` polls for jobs until stopped (Ctrl-C or SIGTERM). ``once`` runs at most one job and
exits: 0 when a job was done or there was none, 1 when the job failed, 3 when results wait in the
spool for the server, 4 when the server could not be reached, 5 when the job was cancelled or
lost, 2 for a configuration error. Both first send any runs left in the spool.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from ..agent.loop import Agent, AgentBusy
from ..config import ConfigError, config_load

EXIT = {
    "done": 0,
    "idle": 0,
    "failed": 1,
    "spooled": 3,
    "unreachable": 4,
    "cancelled": 5,
    "lost": 5,
    "stopped": 5,
}


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="TOML file (default: $BENCHHUB_CONFIG)")
    parser.add_argument("--server", help="BenchHub URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", help="runner token (bhr_...)")
    parser.add_argument("--work-dir", type=Path, help="where clusters, cache and spool live")
    parser.add_argument("--client-bindir", type=Path, help="directory with pgbench and psql")
    parser.add_argument("-v", "--verbose", action="store_true")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser(
        "run",
        help="poll for jobs and run them until stopped",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(run)
    run.set_defaults(func=run_forever)
    once = subparsers.add_parser(
        "once",
        help="run at most one job, then exit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(once)
    once.add_argument(
        "--deliver-wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long to keep retrying the upload while the server is away",
    )
    once.set_defaults(func=run_once)


def _agent(args: argparse.Namespace) -> Agent:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    config = config_load(
        path=args.config,
        overrides={
            "server": args.server,
            "token": args.token,
            "work_dir": args.work_dir,
            "client_bindir": args.client_bindir,
        },
    )
    agent = Agent(config=config)
    agent.install_signal_handlers()
    return agent


def run_once(args: argparse.Namespace) -> int:
    try:
        agent = _agent(args)
        outcome = agent.once(deliver_wait_s=args.deliver_wait)
    except (ConfigError, AgentBusy) as exc:
        print(f"benchhub-runner: {exc}", file=sys.stderr)
        return 2
    print(outcome)
    return EXIT.get(outcome, 1)


def run_forever(args: argparse.Namespace) -> int:
    try:
        agent = _agent(args)
        agent.run_forever()
    except (ConfigError, AgentBusy) as exc:
        print(f"benchhub-runner: {exc}", file=sys.stderr)
        return 2
    return 0
