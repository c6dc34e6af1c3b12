"""The queue under many agents: each of N agents claims, heartbeats its job and finishes it,
then claims again, until the queue is empty. Measures claim latency and checks that no job was
handed to two agents.

Agents keep the agent's rhythm compressed (heartbeat every HEARTBEAT_S instead of 5 s, poll
every POLL_S instead of 10 s), so 50 agents produce far more claims per second than 50 real
ones would: the claim latency measured is an upper bound for that many agents.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from bench.client import post_json, request
from bench.figures import Figure, percentile

HEARTBEAT_S = 1.0
POLL_S = 2.0
TARGET_CLAIM_P95_MS = 50.0


@dataclass(frozen=True)
class QueueOptions:
    agents: int = 50
    jobs: int = 300
    heartbeats: int = 3  # per job


@dataclass
class Tally:
    claims_ms: list[float]
    heartbeats_ms: list[float]
    claimed: list[tuple[int, int]]  # (job id, attempt)
    errors: list[str]
    lock: threading.Lock


def _agent(server: str, token: str, options: QueueOptions, tally: Tally, stop) -> None:
    while not stop.is_set():
        reply = request(f"{server}/api/v1/jobs/claim/", method="POST", token=token)
        with tally.lock:
            tally.claims_ms.append(reply.elapsed_ms)
        if reply.status == 204:
            time.sleep(POLL_S)
            continue
        if reply.status != 200:
            tally.errors.append(f"claim {reply.status}")
            return
        job = reply.json()
        with tally.lock:
            tally.claimed.append((job["id"], job["attempt"]))
        for beat in range(options.heartbeats):
            time.sleep(HEARTBEAT_S)
            answer = post_json(
                f"{server}/api/v1/jobs/{job['id']}/heartbeat/",
                {"progress": {"stage": "level c=8 repeat=1", "step": beat}},
                token=token,
            )
            with tally.lock:
                tally.heartbeats_ms.append(answer.elapsed_ms)
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
    tally = Tally([], [], [], [], threading.Lock())
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
    return [
        Figure("queue", f"claim p95, {options.agents} agents", percentile(tally.claims_ms, 95),
               "ms", op="<=", target=TARGET_CLAIM_P95_MS,
               note=f"{len(tally.claims_ms)} claims, {options.jobs} jobs"),
        Figure("queue", "claim p50", percentile(tally.claims_ms, 50), "ms"),
        Figure("queue", "heartbeat p95", percentile(tally.heartbeats_ms, 95), "ms"),
        Figure("queue", "double claims", doubles, "jobs", op="<=", target=0),
        Figure("queue", "jobs claimed and finished", done, "jobs", op=">=", target=options.jobs,
               note="; ".join(tally.errors[:3])),
        Figure("queue", "jobs/s", options.jobs / wall, "jobs/s"),
    ]  # fmt: skip
