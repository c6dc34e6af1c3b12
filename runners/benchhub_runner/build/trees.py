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
    state.json     the commit the tree holds, the configure arguments it was configured with,
                   and (a tree without patches) its seed key
    .in-progress   there while a build runs in the tree: a tree that has it was left by an
                   interrupted build and is never trusted; it is discarded and built clean
    stage/         ``make install DESTDIR=`` lands here before the install moves into place
    ccache-stats.log  while make runs: ccache's record of this build's compiles

Every tree configures with the same prefix, ``<cache_dir>/builds/tree-prefix``, which no
install uses and nothing creates: the install of each commit is staged with DESTDIR and moved to
its own directory, and its programs find their files relative to where they are (PostgreSQL's
relocatable installs, and an rpath of $ORIGIN/../lib). So a tree's configuration does not change
from one commit to the next, and an incremental build installs the same files as a clean build
of the same commit.

A new tree starts from a copy of a finished tree when one can serve as its seed: one without
patches, of the same build configuration (configure flags, CFLAGS, contrib, compiler), from any
repository. The seed key names that configuration. The copy keeps every object and timestamp,
so the new tree is moved from the seed's commit like any kept tree, and its patches are applied
on top: a patched build of a commit whose unpatched build exists compiles only what the patches
change. Because every tree has the same prefix, the copy's installs are the files a clean build
of the same input installs.
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


def patch_paths(text: str) -> list[str]:
    """The files a unified diff applied with -p1 touches (old and new names; not /dev/null)."""
    paths = []
    for line in text.splitlines():
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].split("\t", 1)[0].strip()
            if name != "/dev/null" and "/" in name:
                paths.append(name.split("/", 1)[1])
    return paths


class BuildTree:
    """One kept tree. Only used with the host's build lock held."""

    def __init__(self, root: Path, *, prefix: Path) -> None:
        self.root = root
        self.src = root / "src"
        self.stage = root / "stage"
        self.prefix = prefix

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

    def seed_key(self) -> str | None:
        """The configuration a complete tree without patches can seed; None for any other."""
        if self.commit() is None:
            return None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            key = json.loads((self.root / STATE).read_text()).get("seed_key")
            if isinstance(key, str):
                return key
        return None

    def begin(self) -> None:
        """Mark the tree as being built: until ``done``, it is not trusted."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        (self.root / STATE).unlink(missing_ok=True)
        (self.root / IN_PROGRESS).write_text("")

    def repository(self) -> str | None:
        """The repository whose commit a complete tree holds (None for trees of older agents)."""
        with contextlib.suppress(OSError, ValueError, AttributeError):
            url = json.loads((self.root / STATE).read_text()).get("repository")
            if isinstance(url, str):
                return url
        return None

    def done(self, *, commit: str, configure_args: list[str], repository: str | None = None,
             seed_key: str | None = None) -> None:  # fmt: skip
        """Trust the tree again: it holds ``commit`` of ``repository``, configured with
        ``configure_args``; ``seed_key`` when it has no patches applied and may seed others."""
        state: dict[str, Any] = {"commit": commit, "configure_args": configure_args}
        if repository is not None:
            state["repository"] = repository
        if seed_key is not None:
            state["seed_key"] = seed_key
        staging = self.root / f".{STATE}.{os.getpid()}"
        staging.write_text(json.dumps(state) + "\n")
        os.replace(staging, self.root / STATE)
        (self.root / IN_PROGRESS).unlink(missing_ok=True)

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def find_seeds(trees: Path, *, seed_key: str, prefix: Path, prefer: Path | None = None
               ) -> list[BuildTree]:  # fmt: skip
    """The finished trees without patches whose configuration is ``seed_key``: ``prefer`` (the
    same repository's) first when it is one, then the most recently used first. Only with the
    build lock held; ``prefix`` is every tree's (see above)."""
    if not trees.is_dir():
        return []
    found = sorted((p for p in trees.iterdir() if p.is_dir()),
                   key=lambda p: (p != prefer, -p.stat().st_mtime))  # fmt: skip
    candidates = (BuildTree(root, prefix=prefix) for root in found)
    return [tree for tree in candidates if tree.seed_key() == seed_key]


def prune_trees(trees: Path, *, keep: set[Path], max_trees: int) -> None:
    """Remove the least recently used trees beyond ``max_trees`` (a tree is about 400 MB),
    never one of ``keep``. Only with the host's build lock held."""
    if not trees.is_dir():
        return
    found = [p for p in trees.iterdir() if p.is_dir() and p not in keep]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in found[max(0, max_trees - len(keep)) :]:
        shutil.rmtree(old, ignore_errors=True)
