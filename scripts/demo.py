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

# What the demo queues: select-only over a client sweep, three repeats each (its CPU profile,
# where the host allows perf, taken at 32 clients), and the idle-connection experiment (E2) at
# the catalog's small size, which this machine can hold.
DEMO_JOBS: list[dict[str, Any]] = [
    {
        "versions": DEMO_VERSIONS,
        "workload": {"catalog": "select-only", "params": {"scale": 10}},
        "scale": 10,
        "clients": [1, 2, 4, 8, 16, 32],
        "profile_clients": 32,
        "duration_s": 5.0,
        "repeats": 3,
    },
    {
        "versions": DEMO_VERSIONS,
        "workload": {"catalog": "e2-idle-connections", "params": {}},
    },
]


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
    env = {
        **os.environ,
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
