"""What a source tree needs from the build host before configure runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchhub_runner.build.compile import generators_missing


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
