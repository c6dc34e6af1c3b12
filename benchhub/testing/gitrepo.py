"""Local git repositories of PostgreSQL for the build tests: the 15.18 source tarball committed
as one commit (tagged REL_15_18, on branch master), which tests extend with commits of their own.

Commits are made with a fixed author, committer and date, so the same tree gives the same sha in
every test: a build of a commit is an install keyed by its sha (the agent's "commit:<sha>"), and
tests of different modules that build the tarball's commit share that install in a session.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchhub.testing import installs

BASE_DATE = "2026-11-01T10:00:00Z"


def git(repo: Path, *args: str, date: str = BASE_DATE) -> str:
    """Run git in ``repo`` as alice at ``date``; its output, stripped."""
    env = {
        "GIT_AUTHOR_NAME": "alice",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "alice",
        "GIT_COMMITTER_EMAIL": "alice@example.org",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(repo: Path, index: int, message: str) -> str:
    """Commit everything in ``repo`` on day ``index`` of November 2026; the new sha."""
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", message, date=f"2026-11-{index:02d}T10:00:00Z")
    return git(repo, "rev-parse", "HEAD")


def pg15_repository(repo: Path) -> str:
    """Make ``repo`` (a new directory) a repository holding the 15.18 tarball as its one commit,
    tagged REL_15_18 on branch master; that commit's sha."""
    repo.mkdir()
    tarball = installs.pg15_source_tarball()
    subprocess.run(
        ["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(repo)], check=True
    )
    git(repo, "init", "-q", "-b", "master")
    sha = commit(repo, 1, "PostgreSQL 15.18")
    git(repo, "tag", "REL_15_18")
    return sha
