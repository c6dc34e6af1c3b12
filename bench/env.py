"""The bench's own database and web server.

The bench never touches the user's data: it derives a database URL from DATABASE_URL with its own
name (default `benchhub_bench`), creates that database when missing, migrates it, and points
Django (in this process) and gunicorn (a child) at it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def bench_database_url(base_url: str, name: str) -> str:
    """`base_url` with its database name replaced by `name`."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def database_create(url: str) -> None:
    """Create the database of `url` if it does not exist (connects to its `postgres` db)."""
    import psycopg
    from psycopg import sql

    name = urlsplit(url).path.lstrip("/")
    admin = bench_database_url(url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not found:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def bench_prepare(base_url: str, name: str) -> str:
    """Create (if needed) and migrate the bench database `name` beside `base_url`'s, and set
    Django up on it in this process; returns its URL. The bench never touches the user's data."""
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    url = bench_database_url(base_url, name)
    database_create(url)
    django_setup(url)
    return url


def django_setup(url: str) -> None:
    """Point this process at the bench database, set Django up, migrate, and point it and its
    gunicorn at collected static files."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchhub.settings")
    # Analysis tasks queued by uploads go to a queue nobody consumes; the bench aggregates
    # itself and empties the queue at the end (redis_queue_clear).
    for name in ("BENCHHUB_INGEST_QUEUE", "BENCHHUB_ANALYSIS_QUEUE", "BENCHHUB_BISECTION_QUEUE"):
        os.environ.setdefault(name, "bench-analysis")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    # The pages gunicorn serves link static files by collectstatic's hashed names.
    from django.conf import settings

    from benchhub.testing.static import static_collected

    settings.STATIC_ROOT = os.environ["BENCHHUB_STATIC_ROOT"] = str(static_collected())


def redis_queue_clear() -> None:
    """Drop the messages queued by the bench's uploads (aggregation, change detection)."""
    import redis

    names = ("BENCHHUB_INGEST_QUEUE", "BENCHHUB_ANALYSIS_QUEUE", "BENCHHUB_BISECTION_QUEUE")
    queues = {os.environ.get(name, "bench-analysis") for name in names}
    with suppress(Exception):
        redis.Redis.from_url(os.environ["REDIS_URL"]).delete(*queues)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class WebServer:
    """gunicorn serving BenchHub on the bench database with `workers` processes of `threads`
    threads each, under the settings every deployment uses (benchhub/gunicorn_conf.py; one
    thread is gunicorn's sync worker)."""

    def __init__(self, *, workers: int, log: Path, threads: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.threads = threads
        self.log = log
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> WebServer:
        argv = [
            str(BIN / "gunicorn"),
            "benchhub.wsgi:application",
            "--config",
            "python:benchhub.gunicorn_conf",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(self.workers),
            "--threads",
            str(self.threads),
            "--graceful-timeout",
            "5",
            # One control socket per user by default, which two benches' web servers would share.
            "--no-control-socket",
        ]
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT
            )
        # Each worker imports Django on its first request: long on a busy two-CPU machine.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):  # noqa: S310
                    return self
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"gunicorn did not answer; see {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
