"""Build trees of git sources, kept between builds and moved from commit to commit.

A bisection builds commit after commit of one repository with one configuration; rebuilding
each in a fresh directory repeats configure, make's walk of every directory and every link,
which ccache does not save. Instead the agent keeps one build tree per repository and build
configuration (configure flags, CFLAGS, contrib, patches, compiler) and moves it to the next
commit: the files that differ are replaced (with a new mtime, so make sees them), configure runs
again only when its inputs changed, and make rebuilds what depends on what changed (every tree
is configured with --enable-depend, so header changes count).

Layout under ``<cache_dir>/builds/trees/<tree key>/``::

    src/           the tree (the runner account's)
    state.json     the commit the tree holds and the configure arguments it was configured with
    .in-progress   there while a build runs in the tree: a tree that has it was left by an
                   interrupted build and is never trusted; it is discarded and built clean
    stage/         ``make install DESTDIR=`` lands here before the install moves into place

Every tree configures with the same prefix, ``<tree>/pgsql``, which no install uses: the
install of each commit is moved to its own directory, and its programs find their files
relative to where they are (PostgreSQL's relocatable installs, and an rpath of $ORIGIN/../lib).
So a tree's configuration does not change from one commit to the next, and an incremental build
installs the same files as a clean build of the same commit.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

STATE = "state.json"
IN_PROGRESS = ".in-progress"
# Files whose change means configure must run again (its script, its macros, the templates it
# fills in, the per-platform makefiles it links).
_CONFIGURE_FILES = frozenset({"configure", "configure.ac", "configure.in", "aclocal.m4"})
_CONFIGURE_DIRS = ("config/", "src/template/", "src/makefiles/")


def configure_input(path: str) -> bool:
    """Whether a change to ``path`` (relative to the source's top) needs configure to run."""
    return path in _CONFIGURE_FILES or path.startswith(_CONFIGURE_DIRS) or path.endswith(".in")


class BuildTree:
    """One kept tree. Only used with the host's build lock held."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.src = root / "src"
        self.stage = root / "stage"
        self.prefix = root / "pgsql"

    def interrupted(self) -> bool:
        """Whether a build in this tree never finished (killed, stopped, or it failed)."""
        return (self.root / IN_PROGRESS).exists()

    def commit(self) -> str | None:
        """The commit a complete tree holds; None when there is none to trust."""
        if self.interrupted():
            return None
        try:
            state = json.loads((self.root / STATE).read_text())
        except (OSError, ValueError):
            return None
        commit = state.get("commit") if isinstance(state, dict) else None
        return commit if isinstance(commit, str) and self.src.is_dir() else None

    def configure_args(self) -> list[str] | None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            args = json.loads((self.root / STATE).read_text()).get("configure_args")
            if isinstance(args, list) and all(isinstance(a, str) for a in args):
                return args
        return None

    def begin(self) -> None:
        """Mark the tree as being built: until ``done``, it is not trusted."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        (self.root / STATE).unlink(missing_ok=True)
        (self.root / IN_PROGRESS).write_text("")

    def done(self, *, commit: str, configure_args: list[str]) -> None:
        state: dict[str, Any] = {"commit": commit, "configure_args": configure_args}
        staging = self.root / f".{STATE}.{os.getpid()}"
        staging.write_text(json.dumps(state) + "\n")
        os.replace(staging, self.root / STATE)
        (self.root / IN_PROGRESS).unlink(missing_ok=True)

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def prune_trees(trees: Path, *, keep: set[Path], max_trees: int) -> None:
    """Remove the least recently used trees beyond ``max_trees`` (a tree is about 400 MB),
    never one of ``keep``. Only with the host's build lock held."""
    if not trees.is_dir():
        return
    found = [p for p in trees.iterdir() if p.is_dir() and p not in keep]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in found[max(0, max_trees - len(keep)) :]:
        shutil.rmtree(old, ignore_errors=True)
