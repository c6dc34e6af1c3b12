"""`make demo`: queue a real 13-against-14 comparison and run a local agent that does it.

Run by `scripts/stack.py demo` as one of the stack's children, with the stack's DATABASE_URL and
REDIS_URL in its environment. It issues a runner token for this machine, queues (once; a second
`make demo` keeps the results and queues nothing new) two jobs for that host, prints where the
results will appear, and then becomes the agent: `benchhub-runner run`, which provisions
PostgreSQL 13 and 14 from the npm registry's prebuilt servers and runs the jobs.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
DEMO_VERSIONS = ["13", "14"]

# What the demo queues, sized to decide on a 2-core machine within minutes. A verdict needs the
# interval of the change to clear the threshold (faster, slower) or fit inside it (the same).
# The agent runs each version in turn at each repeat, so the verdicts compare the repeats in
# pairs (a drift of the host falls on both of a pair), and a paired interval's width falls with
# t(n - 1) / sqrt(n) over n pairs: many short repeats at the levels a 2-core host serves without
# pgbench starving the server (1 and 2 clients; at 4 the server and pgbench contend for the two
# cores and vary most), rather than a wide sweep of long levels. Nine pairs a level instead of
# seven narrow each interval by a sixth for a minute more. Scale 1 fits in shared_buffers: no
# reads from the OS cache to vary, and a load of seconds. The idle-connection experiment (E2)
# gets repeats too: with one a side its variation is unknown and it can never decide. Its
# measured stream keeps 8 clients: on the quiet development VM it varied as much at 2 (pairs
# 13% against 14%, docs/usage.md), so the smaller level would only measure less of it.
DEMO_SELECT_CLIENTS = [1, 2]
DEMO_REPEATS = 9
DEMO_IDLE_REPEATS = 8
DEMO_IDLE_CLIENTS = [8]
DEMO_DURATION_S = 3.0
DEMO_WARMUP_S = 1.0
# The practical threshold the demo's links ask for, in percent: a shared 2-core VM varies by a
# few percent from one repeat to the next, so +-2% (the default) would take far more repeats
# than a demo's minutes to call "the same"; +-5% is a difference worth a demo's verdict. The
# page's threshold box changes it.
DEMO_THRESHOLD_PCT = 5
DEMO_JOBS: list[dict[str, Any]] = [
    {
        "versions": DEMO_VERSIONS,
        "workload": {"catalog": "select-only", "params": {"scale": 1}},
        "scale": 1,
        "clients": DEMO_SELECT_CLIENTS,
        "profile_clients": max(DEMO_SELECT_CLIENTS),
        "duration_s": DEMO_DURATION_S,
        "warmup_s": DEMO_WARMUP_S,
        "repeats": DEMO_REPEATS,
    },
    {
        "versions": DEMO_VERSIONS,
        "workload": {"catalog": "e2-idle-connections", "params": {"scale": 1}},
        "scale": 1,
        "clients": DEMO_IDLE_CLIENTS,
        "duration_s": DEMO_DURATION_S,
        "warmup_s": DEMO_WARMUP_S,
        "repeats": DEMO_IDLE_REPEATS,
    },
]


# The demo's agent settings (a configuration file; the server and token come from the
# environment). It polls often, so that the second job starts as the first ends, and skips the
# extra pass per level for statements and latency percentiles: a minute on a busy 2-core host,
# and nothing the verdicts read. The profile at the profiled level, which the why section
# shows, is kept.
DEMO_AGENT_CONFIG = """\
# Written by `make demo` (scripts/demo.py) for its local agent.
poll_interval_s = 2
evidence_pass = false
"""


def setup_django() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchhub.settings")
    import django

    django.setup()


def demo_host_name() -> str:
    return f"demo-{socket.gethostname()}"[:200]


def demo_token(host_name: str) -> str:
    """A fresh runner token for the demo host; earlier demo tokens are revoked."""
    from django.utils import timezone

    from benchhub.hosts.models import RunnerToken
    from benchhub.hosts.services import runner_token_create

    RunnerToken.objects.filter(host__name=host_name, name="demo", revoked_at=None).update(
        revoked_at=timezone.now()
    )
    _, secret = runner_token_create(host_name=host_name, token_name="demo")  # noqa: S106 - a name
    return secret


def demo_jobs_queue(host_name: str) -> list:
    """Queue the demo jobs for the demo host, unless a demo job that has not failed exists."""
    from benchhub.hosts.models import Host
    from benchhub.jobs.models import Job
    from benchhub.jobs.serializers import JobInSerializer
    from benchhub.jobs.services import job_create

    host = Host.objects.get(name=host_name)
    lasting = Job.objects.filter(host=host).exclude(
        state__in=[Job.State.FAILED, Job.State.CANCELLED, Job.State.EXPIRED]
    )
    jobs = []
    for spec in DEMO_JOBS:
        serializer = JobInSerializer(data={**spec, "host": host_name})
        serializer.is_valid(raise_exception=True)
        name = serializer.validated_data["workload"]["name"]
        existing = lasting.filter(workload__name=name, versions=DEMO_VERSIONS).first()
        jobs.append(existing or job_create(actor="make demo", **serializer.validated_data))
    return jobs


def announce(*, base: str, host_name: str, jobs: list) -> None:
    print(f"demo: jobs {', '.join(str(j.pk) for j in jobs)} for host {host_name}", flush=True)
    for job in jobs:
        # The why section at the profiled level, where the flame graphs are.
        level = job.profile_clients or max(job.clients)
        query = urlencode(
            {
                "workload": job.workload["name"],
                "host": host_name,
                "versions": "13,14",
                "threshold": DEMO_THRESHOLD_PCT,
                "why": level,
            }
        )
        # No #why anchor: the page opens at its verdicts; the why section below them is already
        # made for the profiled level.
        print(f"demo: compare {job.workload['name']}: {base}/compare/?{query}", flush=True)
    print(f"demo: the queue: {base}/jobs/", flush=True)
    print(
        "demo: the agent now downloads PostgreSQL 13 and 14 and runs the jobs; "
        "the pages fill in as results arrive",
        flush=True,
    )


# Not root, the agent has no throwaway account and no sandbox, and refuses every job it does not
# trust. The demo's agent runs only the jobs the demo itself queues on a server that answers on
# 127.0.0.1 alone, so there it trusts them; as root its jobs run sandboxed as on any host.
DEMO_AGENT_TRUST = """\
trust_job_code = true   # not root: no sandbox here, and the jobs are the demo's own
"""


def agent_config_write(work_dir: Path) -> Path:
    """The demo agent's configuration file, in `work_dir`; its path."""
    config = work_dir / "demo-agent.toml"
    text = DEMO_AGENT_CONFIG + (DEMO_AGENT_TRUST if os.geteuid() != 0 else "")
    config.write_text(text)
    return config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--work-dir", type=Path, default=REPO / "var" / "agent")
    args = parser.parse_args()
    setup_django()
    host_name = demo_host_name()
    token = demo_token(host_name)
    jobs = demo_jobs_queue(host_name)
    base = f"http://127.0.0.1:{args.port}"
    announce(base=base, host_name=host_name, jobs=jobs)
    work_dir = args.work_dir
    work_dir.mkdir(parents=True, exist_ok=True)
    # The servers run as an unprivileged user, who must reach their data directories.
    for path in (work_dir.parent, work_dir):
        path.chmod(path.stat().st_mode | 0o755)
    config = agent_config_write(work_dir)
    env = {
        **os.environ,
        "BENCHHUB_CONFIG": str(config),
        "BENCHHUB_SERVER": base,
        "BENCHHUB_TOKEN": token,
        "BENCHHUB_HOST": host_name,
        "BENCHHUB_WORK_DIR": str(work_dir),
    }
    agent = str(VENV_BIN / "benchhub-runner")
    os.execve(agent, [agent, "run"], env)  # noqa: S606 - our own executable, no shell
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
