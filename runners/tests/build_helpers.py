"""Shared pieces of the build tests: a local git repository made from the 15.18 tarball with
commits of our own at chosen dates; the release mirror and the patches come from
benchhub.testing.pgsource, which the server's end-to-end tests share."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchhub.testing.pgsource import (  # noqa: F401 - the build tests' shared helpers
    RELEASE,
    XACT_C,
    http_server,
    release_mirror,
    slow_commit_patch,
    stale_patch,
    unified_patch,
    xact_source,
)


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "alice", "GIT_AUTHOR_EMAIL": "alice@example.org",
           "GIT_COMMITTER_NAME": "alice", "GIT_COMMITTER_EMAIL": "alice@example.org"}  # fmt: skip
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def commit_file(repo: Path, name: str, text: str, *, date: str, message: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def repo_from_tarball(repo: Path, tarball: Path, *, members: list[str] | None = None) -> str:
    """A git repository of the tarball's tree (or only ``members`` of it, for speed), committed
    on 2021-04-30 12:00 UTC and tagged REL_15_18; returns that commit."""
    repo.mkdir(parents=True)
    argv = ["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(repo)]
    subprocess.run(argv + [f"postgresql-{RELEASE}/{m}" for m in members or []], check=True)
    git(repo, "init", "-q", "-b", "master")
    # -f: the tarball's generated files (gram.c, ...) are in its .gitignore files; keeping them
    # lets this repository build without bison and flex, like the tarball itself.
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "PostgreSQL 15.18", date="2021-04-30T12:00:00Z")
    git(repo, "tag", "-a", "REL_15_18", "-m", "15.18", date="2021-04-30T12:00:00Z")
    return git(repo, "rev-parse", "HEAD")
