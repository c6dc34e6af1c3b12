"""Shared pieces of the build tests: a local mirror of ftp.postgresql.org served by a real
``python -m http.server`` process, and a local git repository made from the 15.18 tarball with
commits of our own at chosen dates."""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchhub_runner.cluster import free_port

RELEASE = "15.18"
XACT_C = "src/backend/access/transam/xact.c"


@contextmanager
def http_server(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on 127.0.0.1 from a child process; yields the base URL."""
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    server = subprocess.Popen(
        [*argv, "--directory", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("http.server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def release_mirror(root: Path, tarball: Path, *, version: str = RELEASE) -> Path:
    """Lay ``tarball`` out as ftp.postgresql.org does: pub/source/v<ver>/postgresql-<ver>.tar.bz2
    with its .sha256 beside it (sha256sum's format). Returns the pub/source directory."""
    folder = root / "pub" / "source" / f"v{version}"
    folder.mkdir(parents=True)
    target = folder / f"postgresql-{version}.tar.bz2"
    os.link(tarball, target) if tarball.stat().st_dev == root.stat().st_dev else shutil.copy(
        tarball, target
    )
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    (folder / f"{target.name}.sha256").write_text(f"{digest}  {target.name}\n")
    return root / "pub" / "source"


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


def xact_source(tarball: Path) -> str:
    with tarfile.open(tarball) as archive:
        member = archive.extractfile(f"postgresql-{RELEASE}/{XACT_C}")
        assert member is not None
        return member.read().decode()


def unified_patch(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(lines)


def slow_commit_patch(tarball: Path, *, sleep_us: int = 2000) -> str:
    """A patch sleeping ``sleep_us`` at the start of every CommitTransaction: every transaction,
    read-only ones included, gets that much slower."""
    before = xact_source(tarball)
    start = before.index("\nCommitTransaction(void)\n{\n")
    # After the function's declarations, so the compiler has nothing to warn about.
    line = "\tis_parallel_worker = (s->blockState == TBLOCK_PARALLEL_INPROGRESS);\n"
    at = before.index(line, start) + len(line)
    sleep = f"\n\tpg_usleep({sleep_us});\t/* benchhub test: a slower commit */\n"
    return unified_patch(XACT_C, before, before[:at] + sleep + before[at:])
