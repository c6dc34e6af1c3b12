"""`make bench`: measure BenchHub against its floors and targets; print a table, write JSON.

    python -m bench.run [--quick] [--results N] [--hosts N] [--workloads N] [--agents N]
                        [--agent-pairs N] [--agent-seconds S] [--agent-contrast]
                        [--sections ingest,compare,queue,agent,statistics]
                        [--database NAME] [--output bench/results.json]
                        [--report docs/performance-results.md]

Every figure comes from repeated, interleaved rounds with its 95% interval (bench.intervals);
a target is met only when the whole interval is on its right side.

Needs DATABASE_URL (only its server is used: the bench works in its own database, default
`benchhub_bench`) and REDIS_URL; `make bench` runs it under scripts/stack.py, which provides both.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench import env
from bench.agent import AgentOptions
from bench.figures import Figure, machine, table, write_results
from bench.queueing import AGENTS as QUEUE_AGENTS
from bench.report import REPORT, commit_label, report_write, targets_table
from benchhub import gunicorn_conf

SECTIONS = ("ingest", "compare", "queue", "agent", "statistics")
# gunicorn's threads per worker where BenchHub is deployed (every shape loads
# benchhub/gunicorn_conf.py): the bench serves as they do unless told otherwise.
DEPLOYED_THREADS = gunicorn_conf.threads


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: keeps the bench working")
    parser.add_argument(
        "--results", type=int, default=None, help="results in the history (default 1,000,000)"
    )
    parser.add_argument(
        "--hosts", type=int, default=None,
        help="hosts in the history (default 24, 200 from 10,000,000 results)",
    )  # fmt: skip
    parser.add_argument(
        "--workloads", type=int, default=None,
        help="workloads in the history (default 5, 40 from 10,000,000 results)",
    )  # fmt: skip
    parser.add_argument(
        "--agents", type=int, default=None,
        help=f"agents claiming at the agent's rhythm (default {QUEUE_AGENTS})",
    )  # fmt: skip
    parser.add_argument(
        "--agent-pairs", type=int, default=None,
        help=f"the agent section's interleaved pairs (default {AgentOptions.pairs})",
    )  # fmt: skip
    parser.add_argument(
        "--agent-seconds", type=float, default=None,
        help=f"the agent section's seconds a pass (default {AgentOptions.duration_s:g})",
    )  # fmt: skip
    parser.add_argument(
        "--agent-contrast", action="store_true",
        help="the agent section also runs the agent with its collectors inside the pass",
    )  # fmt: skip
    parser.add_argument(
        "--floor-arrays", choices=("literal", "psycopg"), default="literal",
        help="how the ingest floor writes progress arrays: as the upload does (literal, the "
        "cheapest) or through psycopg's list dumper (the floor of figures before 2026-12-06)",
    )  # fmt: skip
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--database", default="benchhub_bench")
    parser.add_argument("--output", type=Path, default=env.ROOT / "bench" / "results.json")
    parser.add_argument(
        "--report", type=Path, default=REPORT,
        help="the targets' table in Markdown, which docs/performance.md links (default "
        "docs/performance-results.md)",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=int, default=2 * (os.cpu_count() or 1),
        help="gunicorn worker processes (default 2 x CPUs)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, default=DEPLOYED_THREADS,
        help=f"threads per gunicorn worker (default {DEPLOYED_THREADS}, as deployed; 1: sync)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.results is None:
        args.results = 20_000 if args.quick else 1_000_000
    if args.agents is None:
        args.agents = 20 if args.quick else QUEUE_AGENTS
    for name, value, least in (("pairs", args.agent_pairs, 2), ("seconds", args.agent_seconds, 1)):
        if value is not None and value < least:
            parser.error(f"--agent-{name}: at least {least}")
    unknown = set(args.sections.split(",")) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    return args


def agent_options(args: argparse.Namespace) -> AgentOptions:
    agent = AgentOptions.quick() if args.quick else AgentOptions()
    if args.agent_pairs is not None:
        agent = replace(agent, pairs=args.agent_pairs)
    if args.agent_seconds is not None:
        agent = replace(agent, duration_s=args.agent_seconds)
    return replace(agent, contrast=args.agent_contrast)


def run_sections(args: argparse.Namespace, url: str, log: Path) -> list[Figure]:
    from bench.agent import agent_bench

    wanted = args.sections.split(",")
    figures: list[Figure] = []
    if {"ingest", "compare", "queue"} & set(wanted):
        figures += _web_sections(args, url, log, wanted)
    if "agent" in wanted:
        # Against a cluster of its own: no web server.
        agent = agent_options(args)
        figures += _section("agent", lambda: agent_bench(options=agent))
    if "statistics" in wanted:
        figures += _section("statistics", lambda: _statistics(quick=args.quick))
    return figures


def _web_sections(args: argparse.Namespace, url: str, log: Path, wanted: list[str]) -> list[Figure]:
    from bench.compare import CompareOptions, compare_bench
    from bench.ingest import IngestOptions, ingest_bench
    from bench.queueing import QueueOptions, queue_bench

    figures: list[Figure] = []
    with env.WebServer(workers=args.workers, threads=args.threads, log=log) as web:
        if "ingest" in wanted:
            ingest = IngestOptions.quick() if args.quick else IngestOptions()
            ingest = replace(ingest, floor_arrays=args.floor_arrays)
            figures += _section("ingest", lambda: ingest_bench(
                server=web.url, database_url=url, options=ingest))  # fmt: skip
        if "compare" in wanted:
            compare = CompareOptions(results=args.results, hosts=args.hosts,
                                     workloads=args.workloads, warmup=2 * args.workers)  # fmt: skip
            if args.quick:
                compare = replace(compare, rounds=3, requests=2)
            figures += _section("compare", lambda: compare_bench(
                server=web.url, database_url=url, options=compare))  # fmt: skip
        if "queue" in wanted:
            # The agent's rhythm (the target's) with --agents agents; at the stress rhythm 50
            # agents, as in the earlier figures (an upper bound, no target).
            runs = [QueueOptions(agents=args.agents, jobs=2 * args.agents),
                    QueueOptions(agents=50, jobs=300, rhythm="stress")]  # fmt: skip
            if args.quick:
                runs = [QueueOptions(agents=args.agents, jobs=args.agents, heartbeats=1,
                                     rhythm="stress")]  # fmt: skip
            for queue in runs:
                figures += _section(f"queue ({queue.rhythm} rhythm)", lambda q=queue: queue_bench(
                    server=web.url, options=q))  # fmt: skip
    return figures


def _statistics(*, quick: bool) -> list[Figure]:
    """Interval coverage and change-point detection on simulated data (docs/statistics.md);
    pure computation, no server. Their full tables go to stderr."""
    from bench import coverage, detection

    rows = coverage.coverage_bench(trials=20 if quick else 1000, jobs=os.cpu_count() or 1)
    found = detection.detection_bench(series=20 if quick else 500)
    print(coverage.table(rows), detection.table(found), sep="\n\n", file=sys.stderr)
    return coverage.figures(rows) + detection.figures(found)


def _section(name: str, measure) -> list[Figure]:
    started = time.monotonic()
    print(f"bench: {name} ...", file=sys.stderr, flush=True)
    figures = measure()
    print(f"bench: {name} done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return figures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    base = os.environ.get("DATABASE_URL")
    if not base or not os.environ.get("REDIS_URL"):
        print("bench: DATABASE_URL and REDIS_URL must be set (make bench sets them)")
        return 2
    url = env.bench_prepare(base, args.database)
    log = Path(tempfile.mkstemp(prefix="benchhub-bench-gunicorn-", suffix=".log")[1])
    started = datetime.now(UTC)
    commit = commit_label()  # the code measured, before anything is edited while it runs
    try:
        figures = run_sections(args, url, log)
    finally:
        env.redis_queue_clear()
    info = machine()
    print(table(figures))
    print(f"\nTargets\n\n{targets_table(figures)}")
    options = {
        "argv": sys.argv[1:] if argv is None else argv,
        "commit": commit,
        "quick": args.quick,
        "results": args.results,
        "hosts": args.hosts,
        "workloads": args.workloads,
        "agents": args.agents,
        "agent_pairs": args.agent_pairs,
        "agent_seconds": args.agent_seconds,
        "agent_contrast": args.agent_contrast,
        "sections": args.sections,
        "floor_arrays": args.floor_arrays,
        "database": args.database,
        "gunicorn_workers": args.workers,
        "gunicorn_threads": args.threads,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
    }
    document = write_results(args.output, figures=figures, info=info, options=options)
    report_write(args.report, [document])
    print(f"bench: wrote {args.output}, and merged it into {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
