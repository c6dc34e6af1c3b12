"""pgbench: the argv for one measurement, the script syntax a client understands, and running it.

pgbench runs job content (its scripts), so it runs as the cluster's unprivileged account when
the agent is root, in an environment built from scratch (processes.job_env), in its own process
group, with stdout and stderr merged (progress lines go to
stderr, results to stdout; users capture both, and so do we). Each line is handed to a callback
as it arrives, so the agent can report live progress, and the whole text is kept as the raw output.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..sandbox.account import Account
from ..sandbox.processes import job_env

BUILTIN_FLAGS_BEFORE_96 = {"select-only": ["-S"], "simple-update": ["-N"], "tpcb-like": []}

_SETRANDOM = re.compile(r"^\\setrandom\s+(\w+)\s+(\S+)\s+(\S+)\s*$", re.MULTILINE)
_SET_RANDOM = re.compile(
    r"^\\set\s+(\w+)\s+random\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*$", re.MULTILINE
)


class PgbenchError(Exception):
    """pgbench could not be started, or was stopped by the agent."""


@dataclass(frozen=True)
class Target:
    """Where pgbench connects: a unix socket directory (or host), port, user, database."""

    host: str
    port: int
    user: str = "postgres"
    dbname: str = "postgres"


@dataclass
class Measurement:
    """One pgbench execution: a client level of a run, one repeat (or one stream of it).

    `builtin` is one builtin script at weight 1; `builtins` are further builtins with their
    weights (`-b select-only@9`). pgbench picks each transaction's script among every `-b` and
    `-f` by weight, so a builtin and custom scripts run together.
    """

    clients: int
    threads: int
    duration_s: float | None = None
    transactions_per_client: int | None = None
    builtin: str = ""
    scripts: list[tuple[Path, int]] = field(default_factory=list)
    builtins: list[tuple[str, int]] = field(default_factory=list)
    query_mode: str = "simple"
    options: list[str] = field(default_factory=list)
    progress_s: int = 1
    per_statement: bool = True
    no_vacuum: bool = False
    # The per-transaction log (-l): files named <log_prefix>.<pid>[.<thread>], every
    # transaction's line kept with probability sampling_rate. Needs a 10+ client.
    log_prefix: Path | None = None
    sampling_rate: float = 1.0


def client_version(bindir: Path) -> tuple[int, int]:
    """(major, minor) of a pgbench client; 9.6 is (9, 6), 15.19 is (15, 19)."""
    out = subprocess.run(
        [str(bindir / "pgbench"), "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    match = re.search(r"(\d+)\.(\d+)", out) or re.search(r"(\d+)", out)
    if match is None:
        raise PgbenchError(f"cannot tell the version of {bindir / 'pgbench'}: {out!r}")
    numbers = [int(g) for g in match.groups()]
    return (numbers[0], numbers[1] if len(numbers) > 1 else 0)


def script_for_client(body: str, version: tuple[int, int]) -> str:
    """The script in the syntax of that pgbench: `\\setrandom` up to 9.5, `random()` after.

    9.6 replaced `\\setrandom x a b` with `\\set x random(a, b)` and 10 removed the old form, so
    one catalog script serves every client.
    """
    if version >= (9, 6):
        return _SETRANDOM.sub(r"\\set \1 random(\2, \3)", body)
    return _SET_RANDOM.sub(r"\\setrandom \1 \2 \3", body)


def argv(*, bindir: Path, target: Target, m: Measurement, version: tuple[int, int]) -> list[str]:
    """The pgbench command line for one measurement."""
    args = [
        str(bindir / "pgbench"),
        "-h",
        target.host,
        "-p",
        str(target.port),
        "-U",
        target.user,
        "-c",
        str(m.clients),
        "-j",
        str(m.threads),
        "-M",
        m.query_mode,
    ]
    if m.duration_s is not None:
        args += ["-T", str(max(1, round(m.duration_s)))]
    else:
        args += ["-t", str(m.transactions_per_client)]
    if m.progress_s and version >= (9, 4):
        # -P arrived in 9.4: an older client runs without progress lines (capabilities.py).
        args += ["-P", str(m.progress_s)]
    if m.per_statement:
        args.append("-r")
    if m.no_vacuum:
        args.append("-n")
    if m.log_prefix is not None:
        args += ["-l", f"--log-prefix={m.log_prefix}"]
        if m.sampling_rate < 1.0:
            args.append(f"--sampling-rate={m.sampling_rate:g}")
    return [*args, *script_args(m, version), *m.options, target.dbname]


def script_args(m: Measurement, version: tuple[int, int]) -> list[str]:
    """`-b` and `-f` for every script of the measurement (none: pgbench's tpcb-like).

    Before 9.6 pgbench had no `-b` and no weights: a lone builtin is its old flag (`-S`, `-N`),
    and weighted or mixed builtins cannot be run there at all.
    """
    weighted = [*([(m.builtin, 1)] if m.builtin else []), *m.builtins]
    if version < (9, 6):
        if len(weighted) > 1 or (weighted and m.scripts) or any(w != 1 for _, w in m.builtins):
            raise PgbenchError(
                f"pgbench {version[0]}.{version[1]} cannot run weighted or mixed builtin "
                "scripts (-b arrived in 9.6)"
            )
        args = BUILTIN_FLAGS_BEFORE_96[weighted[0][0]] if weighted else []
        return args + [a for path, _ in m.scripts for a in ("-f", str(path))]
    args = ["-b", m.builtin] if m.builtin else []
    for name, weight in m.builtins:
        args += ["-b", f"{name}@{weight}"]
    for path, weight in m.scripts:
        args += ["-f", f"{path}@{weight}"]
    return args


def init_argv(
    *, bindir: Path, target: Target, scale: int, tablespaces: tuple[str, ...] = ()
) -> list[str]:
    """pgbench -i; with tablespaces, the tables go in the first and the indexes in the last
    (every pgbench BenchHub runs, 9.2 on, has --tablespace and --index-tablespace)."""
    placed = (
        [f"--tablespace={tablespaces[0]}", f"--index-tablespace={tablespaces[-1]}"]
        if tablespaces
        else []
    )
    return [
        str(bindir / "pgbench"),
        "-i",
        *placed,
        "-s",
        str(scale),
        "-h",
        target.host,
        "-p",
        str(target.port),
        "-U",
        target.user,
        target.dbname,
    ]


@dataclass
class Execution:
    argv: list[str]
    output: str
    returncode: int
    started_at: float
    elapsed_s: float
    stopped: bool


class Process:
    """A running pgbench; `wait()` collects its output, `stop()` ends it and its children."""

    def __init__(
        self,
        args: list[str],
        *,
        env: Mapping[str, str] | None = None,
        on_line: Callable[[str], None] | None = None,
        account: Account | None = None,
        cwd: Path | None = None,
    ) -> None:
        """`env` adds to the clean environment (PGAPPNAME); `account` is the OS user to run
        as (None: the agent's own); `cwd` also serves as HOME."""
        self.args = args
        self.started_at = time.time()
        self._stopped = False
        self._lines: list[str] = []
        argv, as_account = account.spawn(args, cwd=cwd) if account is not None else (args, {})
        try:
            self.popen = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=job_env(home=cwd or Path("/"), extra=env),
                cwd=cwd,
                start_new_session=True,
                **as_account,
            )
        except OSError as exc:
            raise PgbenchError(f"cannot start {args[0]}: {exc}") from exc
        self._reader = threading.Thread(target=self._read, args=(on_line,), daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _read(self, on_line: Callable[[str], None] | None) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._lines.append(line)
            if on_line is not None:
                on_line(line.rstrip("\n"))

    def stop(self) -> None:
        """SIGINT first (pgbench then prints what it has), SIGKILL if it lingers."""
        self._stopped = True
        for sig, grace in ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0)):
            if self.popen.poll() is not None:
                return
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue

    def wait(self, timeout_s: float | None = None) -> Execution:
        try:
            self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.stop()
        self._reader.join(timeout=10)
        return Execution(
            argv=self.args,
            output="".join(self._lines),
            returncode=self.popen.returncode,
            started_at=self.started_at,
            elapsed_s=time.time() - self.started_at,
            stopped=self._stopped,
        )
