"""A CPU profile of the server during one unmeasured pgbench pass: `perf record`, folded stacks.

perf samples the postmaster and every process it has (backends forked later are followed, as
perf inherits into children) at `FREQUENCY_HZ` with call graphs, on the cpu-clock event, which
also works where hardware counters are not exposed (virtual machines). `perf script` is folded
here, in Python, into one line per distinct stack, outermost frame first, "comm;f1;f2 count" —
the input format of flame graph tools.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

FREQUENCY_HZ = 99
MAX_LINES = 2000
MAX_BYTES = 1_000_000
SCRIPT_TIMEOUT_S = 300
# perf's name for a thread whose comm it never learned: ":<tid>".
UNNAMED = re.compile(r":\d+")


class ProfileError(Exception):
    """perf is missing, not permitted, or failed; the message says which, for `unavailable`."""


def fold(script: str, *, process: str | None = None) -> Counter[str]:
    """Stacks of `perf script` output as {"comm;outer;...;inner": samples}.

    A sample is a header line ("postgres 1234 [000] 12.3: 10101010 cpu-clock:") followed by
    one line per frame, innermost first ("\\t  55d0c2 ExecScan+0x12 (/usr/bin/postgres)"),
    and a blank line. perf names a thread whose fork or comm event it lost (its buffer
    overflows on a loaded host) ":<tid>"; given `process`, such a sample is that process's.
    """
    stacks: Counter[str] = Counter()
    named = _clean(process) if process is not None else None
    comm: str | None = None
    frames: list[str] = []

    def flush() -> None:
        if comm is not None:
            stacks[";".join([comm, *reversed(frames)])] += 1

    for line in script.splitlines():
        if not line.strip():
            flush()
            comm, frames = None, []
        elif line[0] in " \t":
            if comm is not None:
                frames.append(frame_name(line))
        else:
            flush()
            comm, frames = _clean(line.split(None, 1)[0]), []
            if named is not None and UNNAMED.fullmatch(comm):
                comm = named
    flush()
    return stacks


def frame_name(line: str) -> str:
    """ "55d0c2 ExecScan+0x12 (/usr/bin/postgres)" -> "ExecScan"; an unknown symbol is named by
    its object file ("[unknown]" in "postgres")."""
    parts = line.strip().split(None, 1)
    rest = parts[1] if len(parts) > 1 else parts[0]
    symbol, _, dso = rest.rpartition(" (")
    if not symbol:
        symbol, dso = rest, ""
    symbol = symbol.split("+0x", 1)[0]
    dso = dso.rstrip(")")
    if symbol == "[unknown]" and dso and dso != "[unknown]":
        symbol = f"[{Path(dso).name}]"
    return _clean(symbol)


def _clean(name: str) -> str:
    # ";" separates frames and " " the count: neither may appear inside a name.
    return name.replace(";", ":").replace(" ", "_") or "[?]"


def folded_text(stacks: Counter[str]) -> str:
    """The most frequent stacks as folded lines, within MAX_LINES lines and MAX_BYTES."""
    lines: list[str] = []
    size = 0
    for stack, count in stacks.most_common(MAX_LINES):
        line = f"{stack} {count}\n"
        if size + len(line.encode()) > MAX_BYTES:
            break
        lines.append(line)
        size += len(line.encode())
    return "".join(lines)


def server_pids(postmaster: int) -> list[int]:
    """The postmaster and its current children."""
    pids = [postmaster]
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                        pids.append(int(entry))
    return pids


ATTACH_TRIES = 5


class Profiler:
    """`start(postmaster)` before the pass, `stop()` after it returns the evidence's `profile`;
    ProfileError says why there is none."""

    def __init__(self, *, work: Path, frequency_hz: int = FREQUENCY_HZ) -> None:
        self.work = work
        self.frequency_hz = frequency_hz
        self.data = work / "perf.data"
        self.errors = work / "perf.err"
        self._perf: subprocess.Popen[bytes] | None = None
        self._started = 0.0
        self._process: str | None = None

    @staticmethod
    def available() -> str | None:
        """Why perf cannot be used here, or None."""
        if shutil.which("perf") is None:
            return "perf not installed"
        return None

    def start(self, postmaster: int) -> None:
        why = self.available()
        if why is not None:
            raise ProfileError(why)
        # Every process recorded is the postmaster or a fork of it (no exec): one name.
        with contextlib.suppress(OSError):
            self._process = Path(f"/proc/{postmaster}/comm").read_text().strip() or None
        # perf -p refuses the whole list when one pid is gone, and the warm-up's backends are
        # still exiting when the pass starts: list the children again and retry.
        for attempt in range(ATTACH_TRIES):
            pids = ",".join(str(p) for p in server_pids(postmaster))
            argv = ["perf", "record", "-F", str(self.frequency_hz), "-g", "-e", "cpu-clock"]
            argv += ["-o", str(self.data), "-p", pids]
            with open(self.errors, "wb") as errors:
                self._perf = subprocess.Popen(
                    argv, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True
                )
            self._started = time.monotonic()
            time.sleep(0.5)  # perf attaches, or fails at once (not permitted, a pid gone)
            if self._perf.poll() is None:
                return
            self._perf = None
            error = self._error()
            if "No such process" not in error or attempt == ATTACH_TRIES - 1:
                raise ProfileError(f"perf record failed: {error}")

    def stop(self) -> dict[str, Any]:
        perf, self._perf = self._perf, None
        if perf is None:
            raise ProfileError("perf record was not started")
        seconds = time.monotonic() - self._started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(perf.pid, signal.SIGINT)
        try:
            perf.wait(timeout=60)
        except subprocess.TimeoutExpired:
            perf.kill()
            perf.wait(timeout=10)
        if not self.data.is_file():
            raise ProfileError(f"perf record wrote nothing: {self._error()}")
        try:
            done = subprocess.run(
                ["perf", "script", "-i", str(self.data), "-F", "comm,ip,sym,dso"],
                capture_output=True,
                timeout=SCRIPT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ProfileError(f"perf script failed: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                self.data.unlink()
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()[-300:]
            raise ProfileError(f"perf script exit {done.returncode}: {err}")
        folded = folded_text(fold(done.stdout.decode(errors="replace"), process=self._process))
        if not folded:
            raise ProfileError("perf recorded no samples of the server")
        return {
            "tool": "perf",
            "frequency_hz": self.frequency_hz,
            "seconds": round(seconds, 1),
            "folded": folded,
        }

    def abort(self) -> None:
        perf, self._perf = self._perf, None
        if perf is not None and perf.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(perf.pid, signal.SIGKILL)
            perf.wait(timeout=10)
        with contextlib.suppress(OSError):
            self.data.unlink()

    def _error(self) -> str:
        try:
            return self.errors.read_text(errors="replace").strip()[-300:]
        except OSError:
            return ""
