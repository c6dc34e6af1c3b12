"""`make load`: BenchHub under many agents and readers at once, for minutes.

    python -m bench.load [--quick] [--duration S] [--agents 50] [--browsers 20]
                         [--database benchhub_load] [--output bench/load-results.json]

Agents (threads) poll for jobs every POLL_S, heartbeat the job they get every HEARTBEAT_S for
JOB_S seconds (a compressed sweep), upload its run (the ingest section's realistic tpcb-like
sweep: 27 results, 3,240 progress samples) and finish it. Browsers (threads) read the home page,
/api/v1/status/, a comparison, a run's page and the experiments page in a loop with a short
pause. A feeder keeps the queue stocked. When the time is up the agents finish the job in hand.

An error is a 5xx or a failed connection. No result is lost when every upload the server
accepted (200/201) is stored, once, and every job an agent finished is done with its one run.
Works in its own database, like `make bench`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from bench import env, ingest
from bench.client import Reply, post_json, request
from bench.figures import Figure, machine, percentile, table, write_results

POLL_S = 3.0
HEARTBEAT_S = 2.0
THINK_S = (0.2, 1.0)  # a browser's pause between pages
RESULTS = len(ingest.LEVELS) * ingest.REPEATS  # results in each upload (upload_payload)


@dataclass(frozen=True)
class LoadOptions:
    duration_s: float = 300.0
    agents: int = 50
    browsers: int = 20
    job_s: float = 20.0  # how long an agent "measures" a job before uploading

    @classmethod
    def quick(cls) -> LoadOptions:
        return cls(duration_s=20.0, agents=10, browsers=4, job_s=3.0)


@dataclass
class Tally:
    """Everything the threads saw, under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    errors: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)  # run UUIDs the server took
    finished: list[int] = field(default_factory=list)  # job ids finished as done
    claimed: list[tuple[int, int]] = field(default_factory=list)

    def call(self, kind: str, url: str, body: dict | None = None, token: str = "") -> Reply | None:
        """GET `url`, or POST `body` as JSON; None when the connection failed."""
        try:
            if body is None and not token:
                reply = request(url)
            elif body is None:
                reply = request(url, method="POST", token=token)
            else:
                reply = post_json(url, body, token=token)
        except OSError as exc:
            with self.lock:
                self.statuses[kind]["connection"] += 1
                self.errors.append(f"{kind}: {exc!r}")
            return None
        with self.lock:
            self.latencies[kind].append(reply.elapsed_ms)
            self.statuses[kind][reply.status] += 1
            if reply.status >= 500:
                self.errors.append(f"{kind}: {reply.status} {reply.body[:200]!r}")
        return reply


def _agent(server: str, token: str, host: str, options: LoadOptions, tally: Tally, stop) -> None:
    from bench.ingest import upload_payload

    while not stop.is_set():
        claim = tally.call("claim", f"{server}/api/v1/jobs/claim/", token=token)
        if claim is None or claim.status != 200:
            stop.wait(POLL_S)
            continue
        job = claim.json()
        with tally.lock:
            tally.claimed.append((job["id"], job["attempt"]))
        ends = time.monotonic() + options.job_s
        while time.monotonic() < ends and not stop.wait(HEARTBEAT_S):
            beat = {"progress": {"stage": "level c=8 repeat=1", "step": 1}}
            tally.call("heartbeat", f"{server}/api/v1/jobs/{job['id']}/heartbeat/", beat, token)
        payload = upload_payload(host=host, version="16.4")
        payload["job"] = {"id": job["id"], "attempt": job["attempt"]}
        upload = tally.call("upload", f"{server}/api/v1/runs/", payload, token)
        if upload is None or upload.status not in (200, 201):
            continue
        with tally.lock:
            tally.accepted.append(payload["run_uuid"])
        finish = {"outcome": "done"}
        done = tally.call("finish", f"{server}/api/v1/jobs/{job['id']}/finish/", finish, token)
        if done is not None and done.status == 200:
            with tally.lock:
                tally.finished.append(job["id"])


def _browser(server: str, pages: dict[str, str], tally: Tally, stop, seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 - think times, not secrets
    while not stop.is_set():
        for kind, path in pages.items():
            if stop.is_set():
                return
            tally.call(kind, f"{server}{path}")
            stop.wait(rng.uniform(*THINK_S))


def _feeder(tag: str, target: int, stop) -> None:
    """Keep at least `target` jobs queued."""
    from django.db import close_old_connections

    from benchhub.jobs.models import Job
    from benchhub.jobs.services import job_create

    while not stop.is_set():
        queued = Job.objects.filter(host_tags=[tag], state=Job.State.QUEUED).count()
        for _ in range(max(0, target - queued)):
            job_create(actor="load", versions=["16"], clients=[1, 8], duration_s=60.0,
                       workload={"name": "tpcb-like", "builtin": "tpcb-like"},
                       host_tags=[tag])  # fmt: skip
        close_old_connections()
        stop.wait(2.0)


def _setup(options: LoadOptions, tag: str) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Runner tokens of the agents' hosts, and the pages the browsers read (over seeded runs)."""
    from bench.ingest import upload_payload
    from benchhub.hosts.models import Host
    from benchhub.hosts.services import runner_token_create
    from benchhub.results.serializers import RunUploadSerializer
    from benchhub.results.services import payload_digest, run_submit

    agents = []
    for n in range(options.agents):
        token, plaintext = runner_token_create(host_name=f"{tag}-{n:02d}")
        Host.objects.filter(pk=token.host_id).update(tags=[tag])
        agents.append((token.host.name, plaintext))
    seeded = []
    for version in ("15.8", "16.4"):
        payload = upload_payload(host=f"{tag}-seed", version=version)
        upload = RunUploadSerializer(data=payload)
        upload.is_valid(raise_exception=True)
        seeded.append(run_submit(data=upload.validated_data, digest=payload_digest(payload)).run)
    compare = urlencode({"host": f"{tag}-seed", "workload": "tpcb-like", "versions": "15.8,16.4"})
    pages = {
        "home page": "/",
        "status API": "/api/v1/status/",
        "compare page": f"/compare/?{compare}",
        "run page": f"/runs/{seeded[1].uuid}/",
        "experiments page": "/experiments/",
    }
    return agents, pages


def load_bench(*, server: str, options: LoadOptions) -> tuple[list[Figure], dict]:
    from benchhub.jobs.models import Job
    from benchhub.results.models import Result, Run

    tag = f"load-{uuid.uuid4().hex[:6]}"
    agents, pages = _setup(options, tag)
    tally, stop, drain = Tally(), threading.Event(), threading.Event()
    threads = [
        threading.Thread(target=_agent, args=(server, token, host, options, tally, drain))
        for host, token in agents
    ]
    threads += [
        threading.Thread(target=_browser, args=(server, pages, tally, stop, n))
        for n in range(options.browsers)
    ]
    feeder = threading.Thread(target=_feeder, args=(tag, options.agents, stop), daemon=True)
    feeder.start()
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(options.duration_s)
    stop.set()
    drain.set()  # agents end the job in hand: upload, finish, then stop
    for thread in threads:
        thread.join(timeout=120)
    wall = time.monotonic() - started
    jobs = Job.objects.filter(host_tags=[tag])
    states = Counter(jobs.values_list("state", flat=True))
    accepted = set(tally.accepted)
    stored = Run.objects.filter(uuid__in=accepted).count()
    runs_of_jobs = Run.objects.filter(job__host_tags=[tag]).count()
    done_without_one_run = (
        jobs.filter(state=Job.State.DONE).exclude(runs__isnull=False).count()
        + sum(1 for n in Counter(Run.objects.filter(job__host_tags=[tag])
                                 .values_list("job_id", flat=True)).values() if n > 1)
    )  # fmt: skip
    doubles = sum(n - 1 for n in Counter(tally.claimed).values() if n > 1)
    created = tally.statuses["upload"][201]
    results = Result.objects.filter(run__job__host_tags=[tag]).count()
    figures = [
        Figure("load", "errors (5xx, connection)", len(tally.errors), "requests", op="<=",
               target=0, note="; ".join(tally.errors[:3])),
        Figure("load", "uploads accepted", len(accepted), "runs"),
        Figure("load", "accepted uploads not stored", len(accepted) - stored, "runs", op="<=",
               target=0),
        Figure("load", "runs of the jobs stored", runs_of_jobs, "runs"),
        # The agents never retry an upload here, so each 201 is one run, and nothing else is.
        Figure("load", "runs stored - uploads answered 201", runs_of_jobs - created, "runs",
               op="within", target=0, target_high=0, note=f"{created} answered 201"),
        Figure("load", "results stored - results of the runs", results - RESULTS * runs_of_jobs,
               "results", op="within", target=0, target_high=0,
               note=f"{results} stored, {RESULTS} a run"),
        Figure("load", "jobs done without exactly one run", done_without_one_run, "jobs",
               op="<=", target=0),
        Figure("load", "double claims", doubles, "jobs", op="<=", target=0),
        Figure("load", "jobs claimed", len(tally.claimed), "jobs"),
        Figure("load", "jobs done", states.get("done", 0), "jobs"),
    ]  # fmt: skip
    for kind in sorted(tally.latencies):
        values = tally.latencies[kind]
        note = f"p50 {percentile(values, 50):.0f} ms, {len(values)} requests"
        figures.append(Figure("load", f"{kind} p95", percentile(values, 95), "ms", note=note))
    requests = sum(len(v) for v in tally.latencies.values())
    figures.append(Figure("load", "requests/s", requests / wall, "req/s"))
    details = {
        "tag": tag,
        "wall_s": wall,
        "requests": {k: dict(v) for k, v in tally.statuses.items()},
        "latency_ms": {
            k: {"p50": percentile(v, 50), "p95": percentile(v, 95), "count": len(v)}
            for k, v in tally.latencies.items()
        },
        "jobs": {"claimed": len(tally.claimed), "finished": len(tally.finished), **states},
        "uploads": {"accepted": len(accepted), "stored": stored},
        "errors": tally.errors[:50],
    }
    return figures, details


def _scaled_out(args: argparse.Namespace, options: LoadOptions) -> tuple[list[Figure], dict]:
    """The load through the scaled-out site (bench/scaleout.py), its own figures appended."""
    from bench.scaleout import ScaleOut

    with ScaleOut(database=args.database, web_workers=max(1, args.workers // 2)) as site:
        print(f"bench.load: {options} against haproxy at {site.url}", file=sys.stderr, flush=True)
        figures, details = load_bench(server=site.url, options=options)
        chain, chain_details = site.figures(tag=details["tag"])
    return figures + chain, {**details, "scale_out": chain_details}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 s, 10 agents, 4 browsers")
    parser.add_argument("--duration", type=float, default=None, help="seconds (default 300)")
    parser.add_argument("--agents", type=int, default=None)
    parser.add_argument("--browsers", type=int, default=None)
    parser.add_argument("--database", default="benchhub_load")
    parser.add_argument("--output", type=Path, default=env.ROOT / "bench" / "load-results.json")
    parser.add_argument(
        "--workers",
        type=int,
        default=2 * (os.cpu_count() or 1),
        help="gunicorn workers in all (split between the two with --scale-out)",
    )
    parser.add_argument(
        "--scale-out",
        action="store_true",
        help="two gunicorns behind haproxy, a worker per queue, a private primary"
        " behind pgbouncer and its streaming replica (bench/scaleout.py)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    base = os.environ.get("DATABASE_URL")
    if not base or not os.environ.get("REDIS_URL"):
        print("bench.load: DATABASE_URL and REDIS_URL must be set (make load sets them)")
        return 2
    options = LoadOptions.quick() if args.quick else LoadOptions()
    options = LoadOptions(
        duration_s=args.duration or options.duration_s,
        agents=args.agents or options.agents,
        browsers=args.browsers or options.browsers,
        job_s=options.job_s,
    )
    started = datetime.now(UTC)
    try:
        if args.scale_out:
            figures, details = _scaled_out(args, options)
        else:
            env.bench_prepare(base, args.database)
            log = Path(tempfile.mkstemp(prefix="benchhub-load-gunicorn-", suffix=".log")[1])
            with env.WebServer(workers=args.workers, log=log) as web:
                print(f"bench.load: {options} against {web.url}", file=sys.stderr, flush=True)
                figures, details = load_bench(server=web.url, options=options)
    finally:
        env.redis_queue_clear()
    print(table(figures))
    run_options = {
        "quick": args.quick,
        "shape": "scale-out" if args.scale_out else "single",
        **options.__dict__,
        "database": args.database,
        "gunicorn_workers": args.workers,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "details": details,
    }
    write_results(args.output, figures=figures, info=machine(), options=run_options)
    print(f"bench.load: wrote {args.output}")
    failed = [f for f in figures if f.met is False]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
