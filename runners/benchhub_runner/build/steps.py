"""Running the programs of one build: logged, reported live, stoppable, and unprivileged.

configure, make and patch are code (or input) from whoever sent the source, so they never run as
root: an agent running as root runs them as the unprivileged runner account (the one its
PostgreSQL servers run as), always with an environment the builder composes from scratch (no
``BENCHHUB_*``, no tokens, no inherited ``PG*`` or ``MAKEFLAGS``). Every line they print goes to
the build log; the last one and a count of compiled files go to the progress callback at most
once a second. When the stop event is set the program's whole process group is killed and
``BuildStopped`` raised within a fraction of a second.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..sandbox.account import Account
from .errors import BuildError, BuildStopped

TAIL_LINES = 40
REPORT_EVERY_S = 1.0
KILL_GRACE_S = 5.0
MAX_LINE = 300
CAPTURE_TIMEOUT_S = 120


@dataclass(frozen=True)
class BuildProgress:
    """One live report: the stage, a short line (the last output line, or what is happening),
    how many C files were compiled so far in this build, and seconds since the build began."""

    stage: str
    line: str
    compiled: int
    elapsed_s: float


ProgressCallback = Callable[[BuildProgress], None]


class Steps:
    """The programs of one build, all writing to one log file.

    ``account`` is None to run as the agent's own user (when it is not root).
    """

    def __init__(
        self,
        *,
        log_path: Path,
        account: Account | None,
        env: Mapping[str, str],
        progress: ProgressCallback | None,
        stop: threading.Event | None,
    ) -> None:
        self.log_path = log_path
        self.account = account
        self.env = dict(env)
        self.progress = progress
        self.stop = stop or threading.Event()
        self.started = time.monotonic()
        self.compiled = 0
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._last_line = ""
        self._lock = threading.Lock()
        self._last_report = 0.0
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[str] = open(log_path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115

    def close(self) -> None:
        self._log.close()

    def tail(self) -> str:
        with self._lock:
            return "\n".join(self._tail)

    def fail(self, stage: str, message: str) -> BuildError:
        """A BuildError for ``stage`` carrying the log tail (to raise)."""
        self.note(stage, f"FAILED: {message}")
        return BuildError(stage, message, log_tail=self.tail(), log_path=self.log_path)

    def check_stop(self, stage: str) -> None:
        if self.stop.is_set():
            self.note(stage, "stopped")
            raise BuildStopped(stage)

    def note(self, stage: str, line: str) -> None:
        """Write a line of the builder's own to the log and report it now."""
        elapsed = time.monotonic() - self.started
        self._write(f"### [{stage} +{elapsed:.1f}s] {line}\n")
        self.report(stage, line, force=True)

    def report(self, stage: str, line: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if self.progress is None or (not force and now - self._last_report < REPORT_EVERY_S):
            return
        self._last_report = now
        with self._lock:
            compiled = self.compiled
        update = BuildProgress(stage, line[:MAX_LINE], compiled, round(now - self.started, 1))
        self.progress(update)

    def run(
        self,
        argv: Sequence[str],
        *,
        stage: str,
        cwd: Path,
        privileged: bool = False,
        ok_codes: tuple[int, ...] = (0,),
        env: Mapping[str, str] | None = None,
    ) -> int:
        """Run ``argv`` to completion; BuildError (with the log tail) on another exit code.

        ``privileged`` runs it as the agent itself (git on the agent's own source cache); every
        program that reads or builds the source runs unprivileged. ``env`` adds to the build's
        environment for this program only.
        """
        self.check_stop(stage)
        self._write(f"### [{stage}] $ {' '.join(argv)}  (in {cwd})\n")
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env={**self.env, **env} if env else self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                umask=0o022,
                **({} if privileged or self.account is None else self.account.popen_kwargs()),
            )
        except OSError as exc:
            raise self.fail(stage, f"could not run {argv[0]}: {exc}") from exc
        reader = threading.Thread(target=self._pump, args=(proc,), daemon=True)
        reader.start()
        while proc.poll() is None:
            if self.stop.wait(0.2):
                _kill_group(proc)
                reader.join(timeout=5)
                self.check_stop(stage)
            with self._lock:
                last = self._last_line
            self.report(stage, last)
        reader.join(timeout=30)
        if proc.returncode not in ok_codes:
            raise self.fail(stage, f"{Path(argv[0]).name} exited with status {proc.returncode}")
        return proc.returncode

    def capture(
        self,
        argv: Sequence[str],
        *,
        stage: str,
        cwd: Path,
        privileged: bool = False,
        check: bool = True,
    ) -> str:
        """Run a short program (a query, not a build step) and return its stdout; BuildError
        with its stderr when it fails and ``check`` is set. Logged like every other program."""
        self.check_stop(stage)
        self._write(f"### [{stage}] $ {' '.join(argv)}\n")
        try:
            done = subprocess.run(
                list(argv),
                cwd=cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=CAPTURE_TIMEOUT_S,
                check=False,
                **({} if privileged or self.account is None else self.account.popen_kwargs()),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise self.fail(stage, f"could not run {argv[0]}: {exc}") from exc
        out: str = done.stdout.decode("utf-8", errors="replace")
        err: str = done.stderr.decode("utf-8", errors="replace").strip()
        if err:
            self._write(err + "\n")
        if done.returncode != 0 and check:
            raise self.fail(stage, f"{' '.join(argv[:3])} failed: {err[-2000:]}")
        return out

    def _pump(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            self._write(line + "\n")
            with self._lock:
                self._tail.append(line)
                # make's echo of a compile command: "... -c -o foo.o foo.c" (ccache or not),
                # with "-MMD -MP -MF .deps/foo.Po" after it when dependencies are tracked.
                sources = [w for w in line.split() if w.endswith(".c")] if " -c " in line else []
                if sources:
                    self.compiled += 1
                    self._last_line = "compiling " + sources[-1]
                else:
                    self._last_line = line

    def _write(self, text: str) -> None:
        with self._lock:
            self._log.write(text)
            self._log.flush()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # make forks compilers that fork cc1: the whole session goes, politely first.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_S)
    # Whatever of the session outlived its leader (a compiler mid-file) goes now.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def clean_env(*, home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The whole environment of a build program: PATH from the agent, C locale, ``extra``."""
    env = {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C",
        "LC_ALL": "C",
        "TZ": "UTC",
    }
    env.update(extra)
    return env
