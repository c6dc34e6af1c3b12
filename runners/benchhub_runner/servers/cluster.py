"""A private PostgreSQL cluster for one benchmark run.

``Cluster`` owns a work directory (``data/``, ``postgres.log``, ``socket/``): it runs initdb,
writes the base settings and the job's overrides into postgresql.conf, starts and stops the
server with pg_ctl, and queries it with ``psql`` from a client installation (no driver needed:
the agent is stdlib-only). ``stop()`` is idempotent and safe to call from atexit or a signal
handler: it escalates from the requested pg_ctl mode to immediate to SIGKILL, and leaves no
process of this data directory behind.

initdb and postgres refuse to run as root, so an agent running as root runs them as the system
user ``benchhub-runner`` (sandbox/account.py); otherwise everything runs as the agent's user. psql
runs as that user too (a job's setup SQL is job code), and every program gets an environment built
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
import os
import signal
import subprocess
import time
from types import TracebackType
from typing import Literal

from ..sandbox import jobfs
from ..sandbox.account import RUNNER_USER
from ..sandbox.bubblewrap import sandbox_end, sandbox_main
from ..sandbox.processes import job_env
from .conf import ClusterError, conf_quote, free_port, render_overrides, setting_text
from .gucs import SettingsPlan, describe_config, settings_plan
from .programs import gone, program_output
from .sessions import AGENT_OPTIONS, AGENT_SCHEMA, JOB_ROLE, SUPERUSER, ClusterSessions

__all__ = [
    "AGENT_OPTIONS",
    "AGENT_SCHEMA",
    "JOB_ROLE",
    "RUNNER_USER",
    "SUPERUSER",
    "Cluster",
    "ClusterError",
    "conf_quote",
    "free_port",
    "render_overrides",
    "setting_text",
]

START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30
# The postmaster's own signals for each shutdown mode.
_STOP_SIGNALS = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}

StopMode = Literal["smart", "fast", "immediate"]


class Cluster(ClusterSessions):
    """A private PostgreSQL cluster: initdb, start, stop (see the module's docstring)."""

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
        text = "\n# BenchHub base settings\n" + self.base_config_text()
        text += "# BenchHub job overrides\n" + self.overrides_text
        try:
            jobfs.append(self.datadir / "postgresql.conf", text, trusted=self.trusted)
        except OSError as exc:
            raise ClusterError(f"cannot write {self.datadir}/postgresql.conf: {exc}") from exc

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
        log_offset = self._log_size()
        if self._sandboxed():
            self._start_in_sandbox(log_offset)
            return
        pg_ctl = str(self.installation.tool("pg_ctl"))
        argv = [pg_ctl, "-D", str(self.datadir), "-l", str(self.logfile)]
        argv += ["-w", "-t", str(START_TIMEOUT_S), "start"]
        done = self._run(argv, timeout=START_TIMEOUT_S + 30)
        if done.returncode != 0:
            # A half-started postmaster must not outlive the failed attempt.
            self.stop(mode="immediate")
            raise ClusterError(
                f"PostgreSQL {self.installation.version} in {self.datadir} did not start "
                f"(pg_ctl exit {done.returncode}): {program_output(done)}\n"
                f"last lines of {self.logfile}:\n{self.log_tail(since=log_offset)}"
            )

    def stop(self, mode: StopMode = "fast") -> None:
        """Stop the server; idempotent, and leaves no process of this data directory behind.

        Escalates: pg_ctl ``mode``, then immediate, then SIGKILL of the postmaster and of any
        backend it orphaned (found by working directory, which postgres sets to the datadir).
        A sandboxed server is signalled as the main program of its own sandbox, and its whole
        PID namespace killed if it lingers: no pid file is read.
        """
        if self._sandboxed():
            self._stop_in_sandbox(mode)
            return
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

    def _start_in_sandbox(self, log_offset: int) -> None:
        """postgres as the main program of its sandbox, its output appended to the log by a
        shell inside (as the job's account); ready once a session answers."""
        postgres = str(self.installation.tool("postgres"))
        script = 'exec "$0" -D "$1" >>"$2" 2>&1 </dev/null'
        argv = ["/bin/sh", "-c", script, postgres, str(self.datadir), str(self.logfile)]
        argv, as_account = self._as_account(argv, main=True)
        try:
            self._server = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=self.installation.env(job_env(home=self.workdir)),
                cwd=self.workdir,
                start_new_session=True,
                **as_account,
            )
        except OSError as exc:
            raise ClusterError(f"cannot start PostgreSQL in a sandbox: {exc}") from exc
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._server.poll() is not None:
                break
            try:
                self.sql("SELECT 1", timeout=10)
                return
            except ClusterError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        server = self._server
        self._stop_in_sandbox("immediate")
        why = self._sandbox_errors.decode(errors="replace")
        raise ClusterError(
            f"PostgreSQL {self.installation.version} in {self.datadir} did not start "
            f"(exit {server.returncode}) {why.strip()}\n"
            f"last lines of {self.logfile}:\n{self.log_tail(since=log_offset)}"
        )

    def _stop_in_sandbox(self, mode: StopMode) -> None:
        server, self._server = self._server, None
        if server is not None:
            for attempt in dict.fromkeys((mode, "immediate")):
                main = sandbox_main(server.pid) if server.poll() is None else None
                if main is None:
                    break
                with contextlib.suppress(ProcessLookupError):
                    os.kill(main, _STOP_SIGNALS[attempt])
                if gone(main, timeout=STOP_TIMEOUT_S):
                    break
            if server.poll() is None:
                # The sandbox's PID 1 killed: the kernel kills everything in its namespace
                # (what the server left, which PID 1 would wait for, or the server itself).
                sandbox_end(server.pid)
                server.wait(timeout=STOP_TIMEOUT_S)
            if server.stderr:
                with server.stderr:
                    self._sandbox_errors = server.stderr.read()[-2000:]
        self._remove_stale_files()

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
