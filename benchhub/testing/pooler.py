"""pgbouncer in transaction mode in front of the test database, for tests that run BenchHub
through a connection pooler.

The program is Debian's (`make tools` installs the package); it refuses to run as root, so root
runs it as the development stack's unprivileged account. Its configuration, log and sockets live
in a temporary directory and it listens on a free port of 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path

import psycopg
from benchhub_runner.sandbox.account import runner_account
from django.db import connection

from benchhub.testing.processes import free_port

PGBOUNCER = Path("/usr/sbin/pgbouncer")
ACCOUNT = "benchhub"  # the stack's own (scripts/stack.py), already allowed to read its files


class PgBouncer:
    """pgbouncer pooling every database of the test's PostgreSQL `pool_size` server connections
    at a time, in transaction mode; trust authentication for the test database's role."""

    def __init__(self, *, pool_size: int = 2) -> None:
        db = connection.settings_dict
        self.user, self.database = db["USER"], db["NAME"]
        self.upstream = (db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
        self.pool_size = pool_size
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="benchhub-pgbouncer-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """DATABASE_URL for BenchHub behind this pooler."""
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def _write_config(self) -> Path:
        host, port = self.upstream
        (self.dir / "users.txt").write_text(f'"{self.user}" ""\n')
        config = self.dir / "pgbouncer.ini"
        config.write_text(
            "[databases]\n"
            f"* = host={host} port={port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self.dir / 'users.txt'}\n"
            f"admin_users = {self.user}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {self.pool_size}\n"
            "max_client_conn = 200\n"
            f"logfile = {self.dir / 'pgbouncer.log'}\n"
        )
        return config

    def start(self) -> PgBouncer:
        config = self._write_config()
        account = runner_account(name=ACCOUNT)
        kwargs = account.popen_kwargs() if account else {}
        if account:
            os.chown(self.dir, account.uid, account.gid)
            for path in self.dir.iterdir():
                os.chown(path, account.uid, account.gid)
        self.process = subprocess.Popen(
            [str(PGBOUNCER), str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited:\n{self.log()}")
            with suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 1):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"pgbouncer did not listen:\n{self.log()}")

    def stats(self) -> dict[str, int]:
        """SHOW STATS of the test database, from pgbouncer's admin console: totals since start
        (`total_xact_count`, `total_query_count`, ...)."""
        admin = f"host=127.0.0.1 port={self.port} dbname=pgbouncer user={self.user}"
        # The admin console speaks only the simple query protocol, which ClientCursor uses.
        with psycopg.connect(admin, autocommit=True, cursor_factory=psycopg.ClientCursor) as conn:
            cursor = conn.cursor()
            cursor.execute("SHOW STATS")
            names = [column.name for column in cursor.description or []]
            for row in cursor.fetchall():
                values = dict(zip(names, row, strict=True))
                if values["database"] == self.database:
                    return {k: int(v) for k, v in values.items() if k.startswith("total_")}
        raise AssertionError(f"pgbouncer has no statistics for {self.database}")

    def log(self) -> str:
        path = self.dir / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)
