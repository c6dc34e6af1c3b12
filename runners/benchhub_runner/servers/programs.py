"""The ground a cluster stands on: its directories, the OS account its programs run as (in the
job's sandbox and cgroup when the agent is root), those programs run, and its processes found
and ended without trusting anything the job could replace. Cluster (cluster.py) builds on it."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..sandbox import jobfs
from ..sandbox.account import RUNNER_USER, Account, AccountError, runner_account
from ..sandbox.bubblewrap import Sandbox, installation_dirs, sandbox_main
from ..sandbox.confine import cgroup_pids
from ..sandbox.processes import job_env, pid_alive
from .conf import ClusterError, SettingValue, render_overrides, setting_text
from .gucs import SettingsPlan
from .installation import Installation

LOG_TAIL_LINES = 20
# What of the server's log a failure message quotes, at most.
LOG_TAIL_BYTES = 4096
# sun_path is 108 bytes including the terminating NUL.
_MAX_SOCKET_PATH = 107


class ClusterPrograms:
    """One PostgreSQL data directory under ``workdir``, served on ``port`` via a unix socket:
    its layout, its account and the programs and processes that serve it.

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
        sandbox: Sandbox | None = None,
    ) -> None:
        """`account_name`: the OS account the server and its clients run as when the agent is
        root (a job's own throwaway account; created on first use). `sandbox`: the job's
        sandbox layout (sandbox/bubblewrap.py) every program of the cluster runs in, when the agent
        is root; the server then runs in the foreground of its sandbox, without pg_ctl."""
        self.installation = installation
        self.sandbox = sandbox
        self._server: subprocess.Popen[bytes] | None = None
        self._sandbox_errors = b""  # what bwrap said of the last sandboxed server
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
        # Everything below it is the job's to replace with links; it and above, the agent's.
        self.trusted = Path(os.path.commonpath([self.workdir.parent, self.socket_dir.parent]))

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

    @property
    def account(self) -> Account | None:
        """The OS user the server and every program of the job run as (None: the agent's)."""
        return self._account_for_server()

    # --- processes ----------------------------------------------------------------------------

    def processes(self) -> list[int]:
        """Pids of live postgres processes serving this data directory: their working
        directory is the very directory the agent reaches without links (a job that replaced
        its data directory with a link to another cluster's names no process of that one),
        and, when the job has a cgroup, they are in it."""
        datadir = jobfs.identity(self.datadir, trusted=self.trusted)
        if datadir is None:
            return []
        binary = str((self.installation.bindir / "postgres").resolve())
        account = self._account if self._account_known else None
        cgroup = account.cgroup if account is not None else None
        candidates = cgroup_pids(cgroup) if cgroup is not None and cgroup.is_dir() else None
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or (candidates is not None and int(entry) not in candidates):
                continue
            try:
                cwd = os.stat(f"/proc/{entry}/cwd")
                exe = os.readlink(f"/proc/{entry}/exe")
            except OSError:
                continue  # gone, or not ours to inspect
            # Matching the binary too keeps a shell that merely cd'ed into datadir safe.
            same = (cwd.st_dev, cwd.st_ino) == datadir
            if same and exe.startswith(binary) and pid_alive(int(entry)):
                found.append(int(entry))
        return found

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid as the agent sees it, or None (a stale postmaster.pid
        counts as stopped)."""
        if self._sandboxed():
            running = self._server is not None and self._server.poll() is None
            return sandbox_main(self._server.pid) if running and self._server else None
        try:
            head = jobfs.read_tail(self.datadir / "postmaster.pid", trusted=self.trusted)
            pid = int(head.decode(errors="replace").split("\n", 1)[0])
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
        self._remove_stale_files()

    def _remove_stale_files(self) -> None:
        # Each reached without links: a job's link must not make the agent remove another
        # cluster's postmaster.pid.
        stale = [self.datadir / "postmaster.pid"]
        stale += [self.socket_dir / f".s.PGSQL.{self.port}{suffix}" for suffix in ("", ".lock")]
        for path in stale:
            jobfs.unlink(path, trusted=self.trusted)

    def _sandboxed(self) -> bool:
        return self.sandbox is not None and self._account_for_server() is not None

    # --- the server log -----------------------------------------------------------------------

    def log_tail(self, *, lines: int = LOG_TAIL_LINES, since: int = 0) -> str:
        """The last ``lines`` of the server log written after byte offset ``since``, at most
        LOG_TAIL_BYTES of it: read without following a link, and only if it is the server
        account's own file, so it quotes nothing that account could not read anyway."""
        account = self._account if self._account_known else None
        owner = account.uid if account is not None else None
        try:
            data = jobfs.read_tail(
                self.logfile, trusted=self.trusted, owner=owner, since=since, limit=LOG_TAIL_BYTES
            )
        except OSError as exc:
            return f"(no log: {exc.strerror or exc})"
        return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])

    def _log_size(self) -> int:
        try:
            with jobfs.open_dir(self.workdir, trusted=self.trusted) as parent:
                return os.stat(self.logfile.name, dir_fd=parent, follow_symlinks=False).st_size
        except OSError:
            return 0

    # --- running server programs --------------------------------------------------------------

    def _account_for_server(self) -> Account | None:
        if not self._account_known:
            try:
                self._account = runner_account(name=self.account_name)
            except AccountError as exc:
                raise ClusterError(str(exc)) from exc
            if self._account is not None and self.sandbox is not None:
                prefixes = installation_dirs(self.installation.bindir)
                sandbox = self.sandbox.with_readonly(
                    prefixes + installation_dirs(self.client_bindir)
                )
                self._account = dataclasses.replace(self._account, sandbox=sandbox)
            self._account_known = True
        return self._account

    def _prepare_dirs(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        account = self._account_for_server()
        # Opened without links: a link the job left where this version's directory goes must
        # not make root hand its target to the job's account.
        try:
            for path in (self.workdir, self.socket_dir):
                with jobfs.open_dir(path, trusted=self.trusted) as fd:
                    if account is not None:
                        os.fchown(fd, account.uid, account.gid)
                    if path == self.socket_dir:
                        # Only the server's user (and root) may reach the socket: trust auth.
                        os.fchmod(fd, 0o700)
        except OSError as exc:
            raise ClusterError(f"cannot prepare {path}: {exc}") from exc
        if account is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.chown(self.logfile, account.uid, account.gid, follow_symlinks=False)
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

    def _as_account(
        self, argv: list[str], *, main: bool = False
    ) -> tuple[list[str], dict[str, Any]]:
        """`argv` and subprocess arguments that run it as the server's account, in the job's
        cgroup when there is one (the agent's own user when it is not root)."""
        account = self._account_for_server()
        if account is None:
            return argv, {}
        return account.spawn(argv, cwd=self.workdir, main=main)

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
            raise ClusterError(f"{what} failed (exit {done.returncode}): {program_output(done)}")


def program_output(done: subprocess.CompletedProcess[str]) -> str:
    return ((done.stdout or "") + (done.stderr or "")).strip()


def gone(pid: int, *, timeout: float) -> bool:
    _wait_gone([pid], timeout=timeout)
    return not pid_alive(pid)


def _wait_gone(pids: list[int], *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
