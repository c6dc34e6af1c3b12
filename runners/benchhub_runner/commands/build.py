"""``benchhub-runner build SPEC.json [--cache-dir DIR]``: build PostgreSQL from a build spec.

Prints ``{"reused": bool, "bindir": "...", "provenance": {...}}`` as JSON on stdout once the
installation is ready (built now or reused from the cache); live progress goes to stderr.
Settings come from the ``[build]`` table of ``--config`` (if given), then the flags.
Exit status: 0 ready, 1 the build failed (its stage and log tail on stderr), 2 the spec or the
settings are wrong, 5 stopped by Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any

from ..build import (
    BuildError,
    BuildProgress,
    BuildSettings,
    BuildStopped,
    SpecError,
    build_settings_from,
    ensure_build,
    spec_from_json,
)
from ..config import default_work_dir


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "build",
        help="build PostgreSQL from a build spec (or reuse the cached install)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("spec", metavar="SPEC.json", type=Path)
    parser.add_argument("--config", type=Path, help="agent TOML file: its [build] and cache_dir")
    parser.add_argument("--cache-dir", type=Path, help="default: the agent's <work_dir>/cache")
    parser.add_argument("--release-url", help="mirror of ftp.postgresql.org/pub/source")
    parser.add_argument("--jobs", type=int, help="make -j (default: CPU count)")
    parser.add_argument("--ccache", choices=["auto", "on", "off"])
    parser.add_argument("--ccache-dir", type=Path)
    parser.add_argument("--max-cache-gb", type=float)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> tuple[BuildSettings, Path]:
    values: dict[str, Any] = {}
    if args.config is not None:
        values = tomllib.loads(args.config.read_text())
    # The flags override the file's [build] table and are read with it, by the one parser
    # that checks them (as the TOML's own values: paths as strings).
    flags = {
        "release_url": args.release_url,
        "jobs": args.jobs,
        "ccache": args.ccache,
        "ccache_dir": None if args.ccache_dir is None else str(args.ccache_dir),
        "max_cache_gb": args.max_cache_gb,
    }
    table = {**(values.get("build") or {}), **{k: v for k, v in flags.items() if v is not None}}
    settings = build_settings_from(table)
    work_dir = Path(values.get("work_dir") or default_work_dir())
    cache_dir = args.cache_dir or Path(values.get("cache_dir") or work_dir / "cache")
    return settings, cache_dir


def run(args: argparse.Namespace) -> int:
    try:
        spec = spec_from_json(args.spec.read_bytes())
        settings, cache_dir = _settings(args)
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        # SpecError is a ValueError and says which field.
        kind = "spec" if isinstance(exc, SpecError) else "usage"
        print(f"benchhub-runner build: {kind}: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        build = ensure_build(
            spec,
            cache_dir=cache_dir,
            settings=settings,
            progress=None if args.quiet else _print_progress,
            stop=stop,
        )
    except BuildStopped as exc:
        print(f"benchhub-runner build: {exc}", file=sys.stderr)
        return 5
    except BuildError as exc:
        print(f"benchhub-runner build: {exc}", file=sys.stderr)
        return 1
    with build:
        out = {
            "reused": build.reused,
            "bindir": str(build.installation.bindir),
            "provenance": build.provenance,
        }
        print(json.dumps(out, indent=2))
    return 0


def _print_progress(update: BuildProgress) -> None:
    compiled = f" [{update.compiled} files compiled]" if update.compiled else ""
    print(f"{update.elapsed_s:7.1f}s {update.stage}{compiled}: {update.line}", file=sys.stderr)
