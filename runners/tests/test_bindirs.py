"""Where PostgreSQL's programs are found, and whether a process still runs."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from benchhub_runner.sandbox.processes import pid_alive
from benchhub_runner.servers.bindirs import SERVER_TOOLS, bindir_candidates, system_bindirs


def fake_bindir(root: Path, name: str, tools: tuple[str, ...]) -> Path:
    bindir = root / name / "bin"
    bindir.mkdir(parents=True)
    for tool in tools:
        (bindir / tool).write_text("#!/bin/sh\n")
    return bindir


def test_it_lists_system_packages_newest_major_first(tmp_path: Path) -> None:
    for name in ("9.6", "15", "10", "9.5"):
        fake_bindir(tmp_path, name, ("postgres",))
    fake_bindir(tmp_path, "16", ("psql",))  # a client package: no server
    fake_bindir(tmp_path, "common", ("postgres",))

    assert list(system_bindirs(root=tmp_path)) == ["15", "10", "9.6", "9.5", "common"]
    assert list(system_bindirs(root=tmp_path, tools=("psql",))) == ["16"]
    assert system_bindirs(root=tmp_path / "absent") == {}


def test_it_puts_what_the_caller_found_first_and_each_directory_once(tmp_path: Path) -> None:
    system = tmp_path / "system"
    newest = fake_bindir(system, "17", SERVER_TOOLS)
    older = fake_bindir(system, "13", SERVER_TOOLS)
    partial = fake_bindir(tmp_path, "partial", ("postgres",))

    found = bindir_candidates(tools=SERVER_TOOLS, first=[older, partial], root=system)

    assert found[:2] == [older, newest]
    assert partial not in found and len(found) == len(set(found))


def test_it_tells_a_live_process_from_an_exited_one() -> None:
    assert pid_alive(os.getpid())
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert pid_alive(child.pid, "sleep")
        assert not pid_alive(child.pid, "postgres"), "a reused pid is another program"
        child.kill()
        # Killed but not reaped: a zombie has exited.
        deadline = time.monotonic() + 10
        while pid_alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(child.pid)
    finally:
        child.wait()
    assert not pid_alive(child.pid)
    assert not pid_alive(0), "kill(0) would signal our own process group"
