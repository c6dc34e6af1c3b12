"""What a source tree needs from the build host before configure runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchhub_runner.build.steps import BuildProgress, Steps, clean_env
from benchhub_runner.build.toolchain import generators_missing


def test_it_names_the_parser_generators_a_bare_tree_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("flex", "perl"):
        (tools / name).write_text("#!/bin/sh\n")
        (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    tree = tmp_path / "src"
    (tree / "src" / "backend" / "parser").mkdir(parents=True)
    # A git checkout (or a 17+ tarball) has no gram.c: bison is needed, and missing here.
    assert generators_missing(tree) == ["bison"]
    # A 15 tarball ships it: nothing is needed.
    (tree / "src" / "backend" / "parser" / "gram.c").write_text("/* generated */\n")
    assert generators_missing(tree) == []


def test_it_counts_compiles_with_and_without_dependency_tracking(tmp_path: Path) -> None:
    lines = [
        "ccache gcc -Wall -O2 -I../../../src/include -c -o xact.o xact.c",
        "ccache gcc -Wall -O2 -c -o int8.o int8.c -MMD -MP -MF .deps/int8.Po",
        "gcc -Wall -O2 -L../../src/port -Wl,--as-needed -o postgres access/objfiles.txt",
        "make[2]: Entering directory '/src/backend/utils/adt'",
    ]
    updates: list[BuildProgress] = []
    steps = Steps(log_path=tmp_path / "log", account=None, env=clean_env(home=tmp_path, extra={}),
                  progress=updates.append, stop=None)  # fmt: skip
    steps.run(["printf", "%s\\n", *lines], stage="make", cwd=tmp_path)
    steps.report("make", "", force=True)
    steps.close()
    assert updates[-1].compiled == 2
