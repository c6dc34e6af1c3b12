"""Fault test: a real `make up` stopped at random moments, the way supervisors and people stop it.

Each round starts `make up` in a process group of its own (as a supervisor or a script does) on
one var dir and free ports, waits a random time drawn over its whole life (starting the services,
migrating, starting the workers, serving), and then stops it with one of: SIGTERM to the group;
SIGTERM twice (the second during the stop); SIGHUP (a closed terminal); SIGINT (Ctrl-C); SIGINT
then SIGTERM. A round that has not ended 30 s after its first signal is killed with SIGKILL, as a
supervisor would, and fails. After each round no process started under the var dir is left (found
through BENCHHUB_VAR in every process's environment, PostgreSQL and Redis included) and every
port is free.

BENCHHUB_STOP_ROUNDS sets the rounds (default 30: a round is a whole start of the stack, 20 to 35 s
on the 2-core VM, so the suite runs 30 a CI run, each with a new seed, to stay inside the CI budget;
`BENCHHUB_STOP_ROUNDS=100` for a longer run by hand) and BENCHHUB_STOP_SEED the seed (default:
drawn, and printed in any failure, so that a failing sequence can be replayed).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchhub.testing import installs

REPO = Path(__file__).resolve().parent.parent.parent
INHERITED: tuple[str, ...] = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "BENCHHUB_PORT")
INHERITED += ("BENCHHUB_VAR",)
# The suite may itself run under make (make test-slow): its jobserver is not this make's.
INHERITED += ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")
STOP_GRACE_S = 30.0  # what a supervisor gives before SIGKILL (systemd's default is 90)
UP_LINE = "BenchHub is up at"

# The ways a stop arrives: (signal, seconds after the previous one), sent to the process group.
STOPS: dict[str, tuple[tuple[int, float], ...]] = {
    "TERM": ((signal.SIGTERM, 0.0),),
    "TERM twice": ((signal.SIGTERM, 0.0), (signal.SIGTERM, -1.0)),
    "HUP": ((signal.SIGHUP, 0.0),),
    "INT": ((signal.SIGINT, 0.0),),
    "INT then TERM": ((signal.SIGINT, 0.0), (signal.SIGTERM, -1.0)),
}


def free_ports(count: int) -> list[int]:
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


def processes_under(var: Path) -> list[str]:
    """Live processes whose environment names var as BENCHHUB_VAR (zombies have none)."""
    marker = f"BENCHHUB_VAR={var}".encode()
    found = []
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc_dir / "environ").read_bytes()
            cmdline = (proc_dir / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and int(proc_dir.name) != os.getpid():
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{proc_dir.name}: {command}")
    return found


@dataclass
class Stack:
    env: dict[str, str]
    var: Path
    ports: dict[str, int]

    def start(self, log: Path) -> subprocess.Popen[bytes]:
        with open(log, "wb") as out:
            return subprocess.Popen(
                ["make", "-s", "up"], cwd=REPO, env=self.env, stdout=out, stderr=out,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip

    def leftovers(self) -> list[str]:
        found = processes_under(self.var)
        for name, port in self.ports.items():
            if port_answers(port):
                found.append(f"something listens on the {name} port {port}")
        return found


@pytest.fixture
def stack() -> Iterator[Stack]:
    # Not pytest's tmp_path: its parents are 0700, and as root PostgreSQL runs as another user.
    var = Path(tempfile.mkdtemp(prefix="benchhub-stop-"))
    var.chmod(0o755)
    web, pg, redis = free_ports(3)
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    env.update(
        BENCHHUB_VAR=str(var), BENCHHUB_PORT=str(web), BENCHHUB_PG_PORT=str(pg),
        BENCHHUB_REDIS_PORT=str(redis), BENCHHUB_ADMIN_PASSWORD="correct horse battery",
        BENCHHUB_PG_BINDIR=str(installs.client_bindir()),
        BENCHHUB_REDIS_SERVER=str(installs.redis_server()),
    )  # fmt: skip
    yield Stack(env=env, var=var, ports={"web": web, "postgres": pg, "redis": redis})
    for line in processes_under(var):
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
    shutil.rmtree(var, ignore_errors=True)


def time_to_up(stack: Stack) -> float:
    """One whole start (the first: initdb and every migration), stopped by SIGTERM once up."""
    log = stack.var / "first.log"
    started = time.monotonic()
    make = stack.start(log)
    while UP_LINE not in log.read_text(errors="replace"):
        assert make.poll() is None and time.monotonic() - started < 300, log.read_text()[-3000:]
        time.sleep(0.2)
    took = time.monotonic() - started
    os.killpg(make.pid, signal.SIGTERM)
    make.wait(STOP_GRACE_S)
    return took


def stop_round(stack: Stack, *, delay: float, how: str, rng: random.Random, log: Path) -> str:
    """Start, wait delay, stop as `how` says; return what went wrong ("" when nothing)."""
    make = stack.start(log)
    time.sleep(delay)
    for sig, after in STOPS[how]:
        time.sleep(rng.uniform(0.0, 2.0) if after < 0 else after)
        if make.poll() is None:
            os.killpg(make.pid, sig)
    try:
        make.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(make.pid, signal.SIGKILL)
        make.wait()
        return f"still running {STOP_GRACE_S:.0f} s after the signal"
    deadline = time.monotonic() + 2  # the kernel's reaping of the last exits
    while (left := stack.leftovers()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return "; ".join(left)


@pytest.mark.slow
def test_it_leaves_nothing_running_however_and_whenever_make_up_is_stopped(stack: Stack) -> None:
    """Only this test stops a whole `make up` (make, stack.py, PostgreSQL, Redis, gunicorn and
    Celery) at random moments of its life with every kind of signal, including while it stops;
    its 30 rounds take 10 to 18 minutes of one process of the slow suite."""
    rounds = int(os.environ.get("BENCHHUB_STOP_ROUNDS", "30"))
    seed = int(os.environ.get("BENCHHUB_STOP_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    time_to_up(stack)  # the first start makes the cluster and runs every migration
    # What a start takes from then on, plus a while serving: the delays are drawn over it.
    horizon = time_to_up(stack) + 3.0
    assert stack.leftovers() == []

    for number in range(rounds):
        delay, how = rng.uniform(0.0, horizon), rng.choice(sorted(STOPS))
        log = stack.var / f"round-{number}.log"
        started = time.monotonic()
        problem = stop_round(stack, delay=delay, how=how, rng=rng, log=log)
        print(f"round {number}: {how} after {delay:.1f} s, {time.monotonic() - started:.1f} s")

        assert not problem, (
            f"round {number} of seed {seed} ({how} after {delay:.2f} s of {horizon:.1f}): "
            f"{problem}\n{log.read_text(errors='replace')[-3000:]}"
        )
