"""A private PostgreSQL cluster for one benchmark run.

``Cluster`` owns a work directory (``data/``, ``postgres.log``, ``socket/``): it runs initdb,
writes the base settings and the job's overrides into postgresql.conf, starts and stops the
server with pg_ctl, and queries it with ``psql`` from a client installation (no driver needed:
the agent is stdlib-only). ``stop()`` is idempotent and safe to call from atexit or a signal
handler: it escalates from the requested pg_ctl mode to immediate to SIGKILL, and leaves no
process of this data directory behind.

initdb and postgres refuse to run as root, so an agent running as root runs them as the system
user ``benchhub-runner`` (account.py); otherwise everything runs as the agent's user. psql runs
as that user too (a job's setup SQL is job code), and every program gets an environment built
from scratch (processes.job_env): no BENCHHUB_* variable, no token, no PG* redirection.

``job_role_create`` makes the role a job's SQL and pgbench run as when the host does not trust
job code: a login role that is not a superuser, may create in the benchmark database and owns its
``public`` schema, but owns neither the database nor anything the agent reads.

The agent's own sessions (statistics, wait samples, settings, evidence) are never the job's:
they start with ``search_path`` pinned to ``pg_catalog`` (AGENT_OPTIONS, sent at connection start,
which outranks what ``ALTER DATABASE/ROLE ... SET`` stored) and read schema-qualified catalog
objects, so nothing a job creates can stand in for what they read. Only job code (``job=True``:
setup, level setup) runs with the session defaults the job may have changed.
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import io
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .account import RUNNER_USER, Account, AccountError, runner_account
from .gucs import SettingsPlan, describe_config, settings_plan
from .processes import job_env, pid_alive
from .provision import Installation

__all__ = [
    "RUNNER_USER",
    "Cluster",
    "ClusterError",
    "conf_quote",
    "free_port",
    "render_overrides",
    "setting_text",
]

SUPERUSER = "postgres"
# The role a job's setup and pgbench connect as on a host that does not trust job code.
JOB_ROLE = "benchhub_job"
# The agent's own sessions resolve names in the system catalog only (pg_temp last: a session's
# temporary schema otherwise comes first for relations). Startup options are the client's
# source, which outranks per-database and per-role defaults, so no stored SET reaches them.
AGENT_OPTIONS = "-c search_path=pg_catalog,pg_temp"
# The schema that holds the agent's extensions (pg_stat_statements): owned by the superuser,
# so that a job owning `public` cannot swap what the agent reads for its own views.
AGENT_SCHEMA = "benchhub_agent"
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30
LOG_TAIL_LINES = 20
# sun_path is 108 bytes including the terminating NUL.
_MAX_SOCKET_PATH = 107
# Settings the cluster itself controls; a job overriding them would break the connection.
RESERVED_SETTINGS = frozenset(
    {
        "port",
        "listen_addresses",
        "unix_socket_directories",
        "max_connections",
        "data_directory",
        "config_file",
        "hba_file",
        "ident_file",
        "external_pid_file",
    }
)

StopMode = Literal["smart", "fast", "immediate"]
SettingValue = str | int | float | bool


class ClusterError(Exception):
    """A cluster operation failed; the message carries the program's output or the log tail."""


def free_port(*, host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the kernel's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def conf_quote(value: SettingValue) -> str:
    """A postgresql.conf literal: always single-quoted, so units and spaces need no thought."""
    text = setting_text(value)
    if any(ch in text for ch in "\n\r\0"):
        raise ClusterError(f"setting value {text!r} contains a line break or NUL")
    # The config lexer treats backslash as an escape inside quotes, and doubles quotes.
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def setting_text(value: SettingValue) -> str:
    """A setting's value as postgresql.conf reads it (booleans as on/off)."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def render_overrides(overrides: Mapping[str, SettingValue]) -> str:
    """The postgresql.conf lines for a job's overrides, in the job's order."""
    lines = []
    for name, value in overrides.items():
        key = name.strip().lower()
        if not key or not all(ch.isalnum() or ch in "_." for ch in key) or key[0].isdigit():
            raise ClusterError(f"not a PostgreSQL setting name: {name!r}")
        if key in RESERVED_SETTINGS:
            raise ClusterError(f"setting {key} is managed by the runner and cannot be overridden")
        lines.append(f"{key} = {conf_quote(value)}\n")
    return "".join(lines)


class Cluster:
    """One PostgreSQL data directory under ``workdir``, served on ``port`` via a unix socket.

    ``client_bindir`` holds psql (and pgbench) used to talk to the server; any psql from 10 on
    works with servers 10..18. ``overrides_text`` is exactly what was appended for the job.
    """

    def __init__(
        self,
        *,
        installation: Installation,
        client_bindir: Path,
        workdir: Path,
        port: int,
        socket_dir: Path | None = None,
        max_connections: int = 100,
        overrides: Mapping[str, SettingValue] | None = None,
        listen_addresses: str = "",
        preload: tuple[str, ...] = (),
        account_name: str = RUNNER_USER,
    ) -> None:
        """`account_name`: the OS account the server and its clients run as when the agent is
        root (a job's own throwaway account; created on first use)."""
        self.installation = installation
        self.account_name = account_name
        self.client_bindir = Path(client_bindir)
        self.workdir = Path(workdir).absolute()
        self.port = port
        self.socket_dir = Path(socket_dir).absolute() if socket_dir else self.workdir / "socket"
        self.max_connections = max_connections
        self.listen_addresses = listen_addresses
        self.preload = preload
        # Checked now (a bad name fails the job before any server starts); what this server
        # takes of them is settled at initdb, when its binary can be asked (gucs.py).
        self.overrides_text = render_overrides(overrides or {})
        self.overrides = {
            name.strip().lower(): setting_text(value) for name, value in (overrides or {}).items()
        }
        self.settings_plan = SettingsPlan(applied=dict(self.overrides))
        if len(f"{self.socket_dir}/.s.PGSQL.{port}") > _MAX_SOCKET_PATH:
            raise ClusterError(
                f"unix socket path under {self.socket_dir} is longer than {_MAX_SOCKET_PATH} "
                "bytes; pass a shorter socket_dir"
            )
        self._account: Account | None = None
        self._account_known = False

    # --- layout -------------------------------------------------------------------------------

    @property
    def datadir(self) -> Path:
        return self.workdir / "data"

    @property
    def logfile(self) -> Path:
        return self.workdir / "postgres.log"

    @property
    def initialised(self) -> bool:
        return (self.datadir / "PG_VERSION").exists()

    def base_config_text(self) -> str:
        """The settings every BenchHub cluster gets, ahead of the job's overrides."""
        return (
            f"listen_addresses = {conf_quote(self.listen_addresses)}\n"
            f"port = {self.port}\n"
            f"unix_socket_directories = {conf_quote(str(self.socket_dir))}\n"
            f"max_connections = {self.max_connections}\n"
        ) + (
            # The evidence's modules (pg_stat_statements); a job's override still wins.
            f"shared_preload_libraries = {conf_quote(','.join(self.preload))}\n"
            if self.preload
            else ""
        )

    # --- lifecycle ----------------------------------------------------------------------------

    def initdb(self) -> None:
        """Create the data directory and write the configuration; refuses an existing one."""
        if self.initialised:
            raise ClusterError(f"{self.datadir} is already initialised")
        self._prepare_dirs()
        self._run_server_tool(
            [
                str(self.installation.tool("initdb")),
                "-D",
                str(self.datadir),
                "-A",
                "trust",
                "-U",
                SUPERUSER,
                "-E",
                "UTF8",
                "--locale=C",
            ],
            what="initdb",
            timeout=300,
        )
        self.settings_plan = self._plan_settings()
        self.overrides_text = render_overrides(self.settings_plan.applied)
        # Appended, not ALTER SYSTEM: later lines win, the source reads 'configuration file',
        # and postgresql.auto.conf stays empty for the job to inspect.
        with open(self.datadir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# BenchHub base settings\n" + self.base_config_text())
            conf.write("# BenchHub job overrides\n" + self.overrides_text)

    def _plan_settings(self) -> SettingsPlan:
        """The job's overrides as this server's major takes them (gucs.settings_plan)."""
        if not self.overrides:
            return SettingsPlan()
        postgres = self.installation.tool("postgres")
        try:
            known = describe_config(postgres, env=self.installation.env(job_env(home=self.workdir)))
        except (OSError, subprocess.TimeoutExpired):
            known = frozenset()  # every name is then asked of postgres -C

        def exists(name: str) -> bool:
            argv = [str(postgres), "-D", str(self.datadir), "-C", name]
            return self._run(argv, timeout=60).returncode == 0

        return settings_plan(
            self.overrides,
            known=known,
            server=f"PostgreSQL {self.installation.version}",
            exists=exists,
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections (up to 60 s)."""
        if self.postmaster_pid() is not None:
            raise ClusterError(f"PostgreSQL in {self.datadir} is already running")
        log_offset = self.logfile.stat().st_size if self.logfile.exists() else 0
        pg_ctl = str(self.installation.tool("pg_ctl"))
        argv = [pg_ctl, "-D", str(self.datadir), "-l", str(self.logfile)]
        argv += ["-w", "-t", str(START_TIMEOUT_S), "start"]
        done = self._run(argv, timeout=START_TIMEOUT_S + 30)
        if done.returncode != 0:
            # A half-started postmaster must not outlive the failed attempt.
            self.stop(mode="immediate")
            raise ClusterError(
                f"PostgreSQL {self.installation.version} in {self.datadir} did not start "
                f"(pg_ctl exit {done.returncode}): {_output(done)}\n"
                f"last lines of {self.logfile}:\n{self.log_tail(since=log_offset)}"
            )

    def stop(self, mode: StopMode = "fast") -> None:
        """Stop the server; idempotent, and leaves no process of this data directory behind.

        Escalates: pg_ctl ``mode``, then immediate, then SIGKILL of the postmaster and of any
        backend it orphaned (found by working directory, which postgres sets to the datadir).
        """
        pid = self.postmaster_pid()
        if pid is not None:
            for attempt in dict.fromkeys((mode, "immediate")):
                argv = [str(self.installation.tool("pg_ctl")), "-D", str(self.datadir)]
                argv += ["-m", attempt, "-w", "-t", str(STOP_TIMEOUT_S), "stop"]
                # A pg_ctl that hangs or cannot run must not stop the escalation to SIGKILL.
                with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                    self._run(argv, timeout=STOP_TIMEOUT_S + 10)
                if self.postmaster_pid() is None:
                    break
        self._kill_leftovers()

    def __enter__(self) -> Cluster:
        if not self.initialised:
            self.initdb()
        self.start()
        # If the agent exits without unwinding (sys.exit in a thread, a signal handler that
        # raises SystemExit), atexit still stops the server.
        atexit.register(self.stop)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        atexit.unregister(self.stop)
        self.stop()

    # --- processes ----------------------------------------------------------------------------

    def processes(self) -> list[int]:
        """Pids of live postgres processes serving this data directory."""
        datadir = str(self.datadir.resolve())
        binary = str((self.installation.bindir / "postgres").resolve())
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
                exe = os.readlink(f"/proc/{entry}/exe")
            except OSError:
                continue  # gone, or not ours to inspect
            # Matching the binary too keeps a shell that merely cd'ed into datadir safe.
            if cwd == datadir and exe.startswith(binary) and pid_alive(int(entry)):
                found.append(int(entry))
        return found

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid, or None (a stale postmaster.pid counts as stopped)."""
        try:
            first = (self.datadir / "postmaster.pid").read_text().split("\n", 1)[0]
            pid = int(first)
        except (OSError, ValueError):
            return None
        return pid if pid in self.processes() else None

    def _kill_leftovers(self) -> None:
        for _ in range(3):
            pids = self.processes()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            _wait_gone(pids, timeout=10)
        if pids := self.processes():
            raise ClusterError(f"postgres processes {pids} of {self.datadir} survived SIGKILL")
        # Nothing runs any more, so leftover lock files can only mislead. A killed postmaster
        # may linger as an unreaped zombie (PID 1 in a container often does not reap), and the
        # next postmaster would take its pid in the socket lock file for a live server.
        stale = [self.datadir / "postmaster.pid"]
        stale += [self.socket_dir / f".s.PGSQL.{self.port}{suffix}" for suffix in ("", ".lock")]
        for path in stale:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    # --- queries ------------------------------------------------------------------------------

    @property
    def account(self) -> Account | None:
        """The OS user the server and every program of the job run as (None: the agent's)."""
        return self._account_for_server()

    def job_role_create(self, role: str = JOB_ROLE) -> str:
        """Create `role` (login, not a superuser), let it create objects and schemas in the
        database the job uses and make it the owner of that database's `public` schema;
        returns it.

        The role does not own the database: a database's owner may `ALTER DATABASE ... SET`
        defaults (search_path) that every later session there, the agent's too, starts with."""
        quoted = '"' + role.replace('"', '""') + '"'
        self.sql(
            f"CREATE ROLE {quoted} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION; "
            f"GRANT CREATE, TEMPORARY ON DATABASE postgres TO {quoted}; "
            f"ALTER SCHEMA public OWNER TO {quoted}"
        )
        return role

    def sql(
        self, query: str, *, timeout: float = 600, user: str = SUPERUSER, job: bool = False
    ) -> str:
        """Run SQL through psql as database `user` and return its unaligned, tuples-only output
        (no final newline). psql runs as the cluster's OS account, with a clean environment.

        `job`: the SQL is job code and runs with the session defaults as they are; otherwise
        it is the agent's own and its session is pinned (AGENT_OPTIONS)."""
        psql = self.client_bindir / "psql"
        argv = [str(psql), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        argv += ["-h", str(self.socket_dir), "-p", str(self.port), "-U", user]
        argv += ["-d", "postgres", "-c", query]
        argv, as_account = self._as_account(argv)
        extra = {} if job else {"PGOPTIONS": AGENT_OPTIONS}
        try:
            done: subprocess.CompletedProcess[bytes] = subprocess.run(
                argv,
                capture_output=True,
                timeout=timeout,
                env=job_env(home=self.workdir, extra=extra),
                cwd=self.workdir,
                check=False,
                **as_account,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClusterError(f"psql failed for {query!r}: {exc}") from exc
        out = done.stdout.decode("utf-8", errors="replace")
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", errors="replace").strip()
            raise ClusterError(f"psql exit {done.returncode} for {query!r}: {err}")
        return out.removesuffix("\n")

    def psql_session(self, *, user: str = SUPERUSER) -> subprocess.Popen[str]:
        """A psql reading SQL from its stdin and answering on its stdout (unaligned, tuples
        only), for a caller that keeps one connection open (the wait-event sampler); an agent
        session, pinned as `sql` pins it."""
        argv = [str(self.client_bindir / "psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        argv += ["-h", str(self.socket_dir), "-p", str(self.port), "-U", user, "-d", "postgres"]
        argv, as_account = self._as_account(argv)
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                bufsize=1,
                env=job_env(home=self.workdir, extra={"PGOPTIONS": AGENT_OPTIONS}),
                cwd=self.workdir,
                **as_account,
            )
        except OSError as exc:
            raise ClusterError(f"cannot start psql: {exc}") from exc

    def settings(self) -> tuple[dict[str, str], dict[str, str]]:
        """({name: value as SHOW prints it}, {name: source}) for every server setting."""
        # CSV through COPY, so no value (paths, lists, odd strings) can break the parsing.
        out = self.sql(
            "COPY (SELECT name, current_setting(name), source FROM pg_catalog.pg_settings "
            "ORDER BY name) TO STDOUT WITH (FORMAT csv)"
        )
        values: dict[str, str] = {}
        sources: dict[str, str] = {}
        for name, value, source in csv.reader(io.StringIO(out)):
            values[name] = value
            sources[name] = source
        return values, sources

    def server_version(self) -> str:
        return self.sql("SHOW server_version")

    def checkpoint(self) -> None:
        self.sql("CHECKPOINT")

    def log_tail(self, *, lines: int = LOG_TAIL_LINES, since: int = 0) -> str:
        """The last ``lines`` of the server log written after byte offset ``since``."""
        try:
            with open(self.logfile, "rb") as log:
                log.seek(since)
                text = log.read().decode("utf-8", errors="replace")
        except OSError as exc:
            return f"(no log: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    # --- running server programs --------------------------------------------------------------

    def _account_for_server(self) -> Account | None:
        if not self._account_known:
            try:
                self._account = runner_account(name=self.account_name)
            except AccountError as exc:
                raise ClusterError(str(exc)) from exc
            self._account_known = True
        return self._account

    def _prepare_dirs(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        # Only the server's user (and root) may reach the socket: trust auth is on.
        self.socket_dir.chmod(0o700)
        account = self._account_for_server()
        if account is None:
            return
        for path in (self.workdir, self.socket_dir):
            os.chown(path, account.uid, account.gid)
        if self.logfile.exists():
            os.chown(self.logfile, account.uid, account.gid)
        self._check_reachable(account)

    def _check_reachable(self, account: Account) -> None:
        # Root can reach anything, the runner user cannot: test with its own permissions, so
        # a 0700 parent (pytest's tmp dirs, /root) fails here and not deep inside initdb.
        checks = [
            ("-w", self.workdir),
            ("-w", self.socket_dir),
            ("-x", self.installation.tool("postgres")),
        ]
        for flag, path in checks:
            done = subprocess.run(["test", flag, str(path)], check=False, **account.popen_kwargs())
            if done.returncode != 0:
                need = "write to" if flag == "-w" else "run"
                raise ClusterError(
                    f"user {account.name} cannot {need} {path}: every parent directory must be "
                    "traversable by it (mode 0755 or an ACL)"
                )

    def _as_account(self, argv: list[str]) -> tuple[list[str], dict[str, Any]]:
        """`argv` and subprocess arguments that run it as the server's account, in the job's
        cgroup when there is one (the agent's own user when it is not root)."""
        account = self._account_for_server()
        return account.spawn(argv) if account is not None else (argv, {})

    def _run(self, argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
        argv, as_account = self._as_account(argv)
        env = self.installation.env(job_env(home=self.workdir))
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env,
            cwd=self.workdir,
            check=False,
            **as_account,
        )

    def _run_server_tool(self, argv: list[str], *, what: str, timeout: float) -> None:
        try:
            done = self._run(argv, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClusterError(f"{what} failed: {exc}") from exc
        if done.returncode != 0:
            raise ClusterError(f"{what} failed (exit {done.returncode}): {_output(done)}")


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return ((done.stdout or "") + (done.stderr or "")).strip()


def _wait_gone(pids: list[int], *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
