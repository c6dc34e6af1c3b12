"""Subcommands of the ``benchhub-runner`` CLI, one module each.

Each module provides ``register(subparsers)``, which adds its subparser and sets
``func=<callable(args) -> exit status>``. To add a subcommand, write its module and list it in
:data:`benchhub_runner.cli.COMMANDS`.
"""
