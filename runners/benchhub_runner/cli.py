"""Command-line entry point of the BenchHub runner (``benchhub-runner``).

Subcommands live in :mod:`benchhub_runner.commands`, one module each, listed in
:data:`COMMANDS`: ``parse`` prints pgbench output as JSON; ``run`` works a server's queue until
stopped and ``once`` runs at most one job; ``import`` uploads historical pgbench outputs as a run;
``build`` builds PostgreSQL from a build spec; ``spool`` lists and retries the runs waiting for
the server; ``configure`` writes the agent's configuration file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .commands import agent as agent_commands
from .commands import build as build_command
from .commands import configure as configure_command
from .commands import importing as import_command
from .commands import parse as parse_command
from .commands import spool as spool_command

COMMANDS = (
    parse_command,
    agent_commands,
    import_command,
    build_command,
    spool_command,
    configure_command,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchhub-runner", description="BenchHub agent: runs and parses pgbench."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
