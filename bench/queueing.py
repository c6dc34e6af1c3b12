"""The queue under many agents: each of N agents claims, heartbeats its job and finishes it,
then claims again, until the queue is empty. Measures claim latency and checks that no job was
handed to two agents.

Two rhythms. `agent` is the agent's own (a heartbeat every 5 s, a poll every 10 s when idle),
the agents starting at random moments within one poll interval as real ones do: the target
applies to it. `stress` compresses it fivefold (1 s, 2 s) with every agent starting at once, so
50 agents produce the claims of about 250: an upper bound, reported without a target.

A latency percentile's 95% interval is a bootstrap over windows of one poll interval (claims
are grouped by the moment they were sent; claims of one window share the server's load of that
moment), as bench.intervals.percentile_interval does over rounds.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from bench.client import post_json, request
from bench.figures import Figure
from bench.intervals import percentile_interval

# The target (docs/performance.md): claim p95 < 50 ms with 200 agents at the agent's rhythm,
# zero double claims.
TARGET_CLAIM_P95_MS = 50.0
TARGET_CLAIM_TEXT = "< 50 ms (200 agents, agent's rhythm)"
AGENTS = 200


@dataclass(frozen=True)
class QueueOptions:
    agents: int = AGENTS
    jobs: int = 300
    heartbeats: int = 3  # per job
    rhythm: str = "agent"  # or "stress"

    @property
    def heartbeat_s(self) -> float:
        return 5.0 if self.rhythm == "agent" else 1.0

    @property
    def poll_s(self) -> float:
        return 10.0 if self.rhythm == "agent" else 2.0


@dataclass
class Tally:
    claims_ms: list[tuple[float, float]]  # (sent at, monotonic s; milliseconds)
    claims_server_ms: list[tuple[float, float]]  # the same claims' time in Django
    heartbeats_ms: list[tuple[float, float]]
    claimed: list[tuple[int, int]]  # (job id, attempt)
    errors: list[str]
    lock: threading.Lock


def _agent(server: str, token: str, options: QueueOptions, tally: Tally, stop) -> None:
    if options.rhythm == "agent":
        stop.wait(random.uniform(0, options.poll_s))  # noqa: S311 - not cryptographic
    while not stop.is_set():
        sent = time.monotonic()
        reply = request(f"{server}/api/v1/jobs/claim/", method="POST", token=token)
        with tally.lock:
            tally.claims_ms.append((sent, reply.elapsed_ms))
            if reply.server_ms is not None:
                tally.claims_server_ms.append((sent, reply.server_ms))
        if reply.status == 204:
            time.sleep(options.poll_s)
            continue
        if reply.status != 200:
            tally.errors.append(f"claim {reply.status}")
            return
        job = reply.json()
        with tally.lock:
            tally.claimed.append((job["id"], job["attempt"]))
        for beat in range(options.heartbeats):
            time.sleep(options.heartbeat_s)
            sent = time.monotonic()
            answer = post_json(
                f"{server}/api/v1/jobs/{job['id']}/heartbeat/",
                {"progress": {"stage": "level c=8 repeat=1", "step": beat}},
                token=token,
            )
            with tally.lock:
                tally.heartbeats_ms.append((sent, answer.elapsed_ms))
            if answer.status != 200:
                tally.errors.append(f"heartbeat {answer.status}: {answer.body[:200]!r}")
                break
        # "done" needs the job's runs uploaded (that path is the ingest section's); a
        # failure with its stage is the other way an agent ends a job.
        done = post_json(
            f"{server}/api/v1/jobs/{job['id']}/finish/",
            {"outcome": "failed", "stage": "bench", "message": "queue bench: nothing measured"},
            token=token,
        )
        if done.status != 200:
            tally.errors.append(f"finish {done.status}: {done.body[:200]!r}")


def _queue_jobs(count: int, tag: str) -> None:
    from benchhub.jobs.services import job_create

    for _ in range(count):
        job_create(
            actor="bench",
            versions=["16"],
            workload={"name": "select-only", "builtin": "select-only"},
            clients=[1, 8],
            duration_s=60.0,
            host_tags=[tag],
        )


def queue_bench(*, server: str, options: QueueOptions) -> list[Figure]:
    from benchhub.hosts.models import Host
    from benchhub.hosts.services import runner_token_create
    from benchhub.jobs.models import Job

    run_id = uuid.uuid4().hex[:6]
    tag = f"bench-{run_id}"
    tokens = []
    for n in range(options.agents):
        token, plaintext = runner_token_create(host_name=f"queue-{run_id}-{n:02d}")
        Host.objects.filter(pk=token.host_id).update(tags=[tag])
        tokens.append(plaintext)
    _queue_jobs(options.jobs, tag)
    tally = Tally([], [], [], [], [], threading.Lock())
    stop = threading.Event()
    agents = [
        threading.Thread(target=_agent, args=(server, t, options, tally, stop), daemon=True)
        for t in tokens
    ]
    started = time.perf_counter()
    for agent in agents:
        agent.start()
    deadline = time.monotonic() + 600
    jobs = Job.objects.filter(host_tags=[tag])
    while jobs.exclude(state__in=Job.FINAL).exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    wall = time.perf_counter() - started
    stop.set()
    for agent in agents:
        agent.join(timeout=30)
    # A job claimed again after a lapsed lease comes with a new attempt; the same (job,
    # attempt) handed out twice is a double claim.
    doubles = sum(n - 1 for n in Counter(tally.claimed).values() if n > 1)
    done = jobs.filter(state=Job.State.FAILED, failure_stage="bench").count()
    rhythm = f"{options.rhythm} rhythm"
    claims = windows(tally.claims_ms, seconds=options.poll_s)
    beats = windows(tally.heartbeats_ms, seconds=options.poll_s)
    # The target is for the agent's own rhythm; the stress figures are an upper bound.
    target = TARGET_CLAIM_P95_MS if options.rhythm == "agent" else None
    figures = [
        Figure.measured("queue", f"claim p95, {options.agents} agents, {rhythm}",
                        percentile_interval(rounds=claims, q=95), "ms",
                        op="<=" if target else None, target=target,
                        target_text=TARGET_CLAIM_TEXT if target else "",
                        note=f"{len(tally.claims_ms)} claims, {options.jobs} jobs, heartbeat "
                             f"every {options.heartbeat_s:g} s, poll every {options.poll_s:g} s; "
                             f"rounds: windows of {options.poll_s:g} s"),
        Figure.measured("queue", f"claim p50, {rhythm}", percentile_interval(rounds=claims, q=50),
                        "ms"),
    ]  # fmt: skip
    in_django = windows(tally.claims_server_ms, seconds=options.poll_s)
    if in_django:
        # What the claims spent in Django (Server-Timing) against what the agents waited: the
        # difference is the wait for a free worker, the connection and the client's own threads.
        figures += [
            Figure.measured("queue", f"claim p95 in Django, {rhythm}",
                            percentile_interval(rounds=in_django, q=95), "ms",
                            note="the responses' Server-Timing"),
            Figure.measured("queue", f"claim p50 in Django, {rhythm}",
                            percentile_interval(rounds=in_django, q=50), "ms"),
        ]  # fmt: skip
    if beats:
        figures.append(Figure.measured("queue", f"heartbeat p95, {rhythm}",
                                       percentile_interval(rounds=beats, q=95), "ms"))  # fmt: skip
    figures += [
        Figure("queue", f"double claims, {rhythm}", doubles, "jobs", op="<=", target=0,
               exact=True),
        Figure("queue", f"jobs claimed and finished, {rhythm}", done, "jobs", op=">=",
               target=options.jobs, exact=True, note="; ".join(tally.errors[:3])),
        Figure("queue", f"jobs/s, {rhythm}", options.jobs / wall, "jobs/s",
               note="one run: the whole queue's wall time"),
    ]  # fmt: skip
    return figures


def windows(timed: list[tuple[float, float]], *, seconds: float) -> list[list[float]]:
    """Milliseconds grouped by the window of `seconds` they were sent in (empty windows left
    out), in time order."""
    if not timed:
        return []
    start = min(sent for sent, _ in timed)
    groups: dict[int, list[float]] = {}
    for sent, elapsed in timed:
        groups.setdefault(int((sent - start) // seconds), []).append(elapsed)
    return [groups[k] for k in sorted(groups)]
