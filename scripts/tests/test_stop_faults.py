"""Fault test: a real `make up` stopped at each moment of its life, the way supervisors and
people stop it.

Each round starts `make up` in a process group of its own (as a supervisor or a script does) on
one var dir and free ports, waits until the start has reached one moment, and then stops it with
one of: SIGTERM to the group; SIGTERM twice (the second during the stop); SIGHUP (a closed
terminal); SIGINT (Ctrl-C); SIGINT then SIGTERM. A round that has not ended 30 s after its first
signal is killed with SIGKILL, as a supervisor would, and fails. After each round no process
started under the var dir is left (found through BENCHHUB_VAR in every process's environment,
PostgreSQL and Redis included) and every port is free.

The moments are the parts of scripts/stack.py a stop can land in, each a different cleanup, told
apart by the processes under the var dir rather than by a time: at once (make and stack.py
starting, before its handler exists), while pg_ctl starts PostgreSQL, while Redis starts and
answers, during each of the three manage.py commands (migrate, collectstatic, ensure_admin: the
child shares the group and dies of the signal), while the web children start (gunicorn and
Celery in groups of their own, not yet serving) and while serving. The first round, on a new var
dir, is the serving one: it makes the cluster and runs every migration on the way.

Why one round a moment and not 30 random ones (BENCHHUB_STOP_ROUNDS adds random ones): stack.py
treats SIGTERM, SIGHUP and SIGINT alike (StopRequest records the first and acts where it checks;
scripts/tests/test_stack.py covers the handler), so what differs between two stops is the moment,
which decides what has to be undone, and which signal the group's manage.py child gets. Random
delays spent most rounds in the long moments (migrate, the children starting, serving) and rarely
landed in the short ones (Redis starting takes a fraction of a second); waiting on the processes
hits each of them every run. The stop kinds are dealt to the moments from a seed, each kind at
least once a run, so over runs every kind meets every moment; the second signal of a double stop
comes 0 to 2 s after the first, during the stop.

BENCHHUB_STOP_ROUNDS adds that many rounds stopped at random times over a whole start, as the test
did before (for a longer run by hand: `BENCHHUB_STOP_ROUNDS=100`), and BENCHHUB_STOP_SEED sets the
seed (default: drawn, and printed in any failure, so that a failing sequence can be replayed).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchhub.testing import installs
from benchhub.testing.processes import free_ports, port_answers

REPO = Path(__file__).resolve().parent.parent.parent
INHERITED: tuple[str, ...] = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "BENCHHUB_PORT")
INHERITED += ("BENCHHUB_VAR",)
# The suite may itself run under make (make test-slow): its jobserver is not this make's.
INHERITED += ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")
STOP_GRACE_S = 30.0  # what a supervisor gives before SIGKILL (systemd's default is 90)
START_LIMIT_S = 300.0  # a start that reaches no moment by then has hung: the round fails
UP_LINE = "BenchHub is up at"
ATTEMPTS = 3  # tries at catching a short moment before the round fails as missed

# The ways a stop arrives: (signal, seconds after the previous one), sent to the process group.
STOPS: dict[str, tuple[tuple[int, float], ...]] = {
    "TERM": ((signal.SIGTERM, 0.0),),
    "TERM twice": ((signal.SIGTERM, 0.0), (signal.SIGTERM, -1.0)),
    "HUP": ((signal.SIGHUP, 0.0),),
    "INT": ((signal.SIGINT, 0.0),),
    "INT then TERM": ((signal.SIGINT, 0.0), (signal.SIGTERM, -1.0)),
}


@dataclass(frozen=True)
class Seen:
    """What a start shows: the command lines of the processes under its var dir, and whether
    it has said it is up."""

    commands: tuple[str, ...]
    postgres_up: bool
    up: bool

    def running(self, *words: str) -> bool:
        return any(all(word in command for word in words) for command in self.commands)


# The moments of a start, in the order it passes them: whether a start is in each.
MOMENTS: dict[str, Callable[[Seen], bool]] = {
    "at once": lambda seen: True,
    "PostgreSQL starting": lambda seen: seen.running("pg_ctl", "start"),
    # From pg_ctl's exit to the first manage.py: the database made if missing, Redis started and
    # pinged, the secret key read. Seen by the ports: both servers rewrite their process titles
    # over the environment that would name the var dir.
    "Redis starting": lambda seen: (
        seen.postgres_up
        and not any(seen.running(word) for word in ("pg_ctl", "manage.py", "gunicorn", "celery"))
    ),
    "migrate": lambda seen: seen.running("manage.py", "migrate"),
    "collectstatic": lambda seen: seen.running("manage.py", "collectstatic"),
    "ensure_admin": lambda seen: seen.running("manage.py", "ensure_admin"),
    "web children starting": lambda seen: (
        not seen.up and (seen.running("gunicorn") or seen.running("celery"))
    ),
    "serving": lambda seen: seen.up,
}
# The first round (a new var dir: initdb and every migration) goes all the way.
FIRST = "serving"


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

    def seen(self, log: Path) -> Seen:
        commands = tuple(line.split(": ", 1)[1] for line in processes_under(self.var))
        up = UP_LINE in log.read_text(errors="replace")
        return Seen(commands=commands, postgres_up=port_answers(self.ports["postgres"]), up=up)

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


def wait_for(stack: Stack, make: subprocess.Popen[bytes], moment: str, log: Path) -> bool:
    """Wait until the start is in `moment`; False when it got past it (or ended) first."""
    later = list(MOMENTS.values())[list(MOMENTS).index(moment) + 1 :]
    started = time.monotonic()
    while True:
        seen = stack.seen(log)
        if MOMENTS[moment](seen):
            return True
        if any(check(seen) for check in later) or make.poll() is not None:
            return False
        assert time.monotonic() - started < START_LIMIT_S, log.read_text()[-3000:]
        time.sleep(0.02)


def time_to_up(stack: Stack) -> float:
    """One whole start, stopped by SIGTERM once up (random rounds draw their delays over it)."""
    log = stack.var / "measure.log"
    started = time.monotonic()
    make = stack.start(log)
    assert wait_for(stack, make, "serving", log), log.read_text()[-3000:]
    took = time.monotonic() - started
    os.killpg(make.pid, signal.SIGTERM)
    make.wait(STOP_GRACE_S)
    return took


def stop(stack: Stack, make: subprocess.Popen[bytes], *, how: str, rng: random.Random) -> str:
    """Stop a running start as `how` says; return what went wrong ("" when nothing)."""
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


def moment_round(stack: Stack, *, moment: str, how: str, rng: random.Random, log: Path) -> str:
    """Start, stop in `moment` as `how` says; return what went wrong ("" when nothing). A short
    moment the start got past before it was seen is tried again, ATTEMPTS times in all: each
    try is a whole round, checked like any other."""
    for attempt in range(1, ATTEMPTS + 1):
        make = stack.start(log)
        caught = wait_for(stack, make, moment, log)
        if problem := stop(stack, make, how=how, rng=rng):
            return problem
        if caught:
            return ""
        print(f"  missed {moment!r} (try {attempt}): stopped later, and nothing was left")
    return f"the start was never caught in {moment!r} in {ATTEMPTS} tries"


def random_round(stack: Stack, *, delay: float, how: str, rng: random.Random, log: Path) -> str:
    """Start, wait delay, stop as `how` says; return what went wrong ("" when nothing)."""
    make = stack.start(log)
    time.sleep(delay)
    return stop(stack, make, how=how, rng=rng)


def dealt(rng: random.Random) -> list[tuple[str, str]]:
    """(moment, stop kind) for each round: FIRST first, every kind at least once."""
    moments = [FIRST, *(name for name in MOMENTS if name != FIRST)]
    kinds = sorted(STOPS)
    rng.shuffle(kinds)
    hows = [*kinds, *(rng.choice(kinds) for _ in range(len(moments) - len(kinds)))]
    rng.shuffle(hows)
    return list(zip(moments, hows, strict=True))


@pytest.mark.slow
def test_it_leaves_nothing_running_however_and_whenever_make_up_is_stopped(stack: Stack) -> None:
    """Only this test stops a whole `make up` (make, stack.py, PostgreSQL, Redis, gunicorn and
    Celery) in every moment of its start and while serving, with every kind of signal, including
    while it stops: 8 rounds, about 2 to 5 minutes of one process of the slow suite (5 at a load
    of 15)."""
    seed = int(os.environ.get("BENCHHUB_STOP_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    for number, (moment, how) in enumerate(dealt(rng)):
        log = stack.var / f"round-{number}.log"
        started = time.monotonic()
        problem = moment_round(stack, moment=moment, how=how, rng=rng, log=log)
        print(f"round {number}: {how} in {moment}, {time.monotonic() - started:.1f} s")
        assert not problem, (
            f"round {number} of seed {seed} ({how} in {moment}): "
            f"{problem}\n{log.read_text(errors='replace')[-3000:]}"
        )

    rounds = int(os.environ.get("BENCHHUB_STOP_ROUNDS", "0"))
    if not rounds:
        return
    # What a start takes from then on, plus a while serving: the delays are drawn over it.
    horizon = time_to_up(stack) + 3.0
    for number in range(rounds):
        delay, how = rng.uniform(0.0, horizon), rng.choice(sorted(STOPS))
        log = stack.var / f"random-{number}.log"
        started = time.monotonic()
        problem = random_round(stack, delay=delay, how=how, rng=rng, log=log)
        took = time.monotonic() - started
        print(f"random round {number}: {how} after {delay:.1f} s, {took:.1f} s")
        assert not problem, (
            f"random round {number} of seed {seed} ({how} after {delay:.2f} s of {horizon:.1f}): "
            f"{problem}\n{log.read_text(errors='replace')[-3000:]}"
        )
