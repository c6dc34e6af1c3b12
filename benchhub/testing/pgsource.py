"""The PostgreSQL 15.18 source tarball (``installs.pg15_source_tarball``) as the build tests use
it: served as ftp.postgresql.org serves releases, and patched in the ways they share (a patch
that slows every commit, one that only adds a comment, one that no longer applies).

One text per patch for the whole suite: a patched build is an install keyed by the patch's
sha256, so tests of different modules that send the same patch reuse one install.
"""

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

from benchhub_runner.servers.cluster import free_port

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
    if tarball.stat().st_dev == root.stat().st_dev:
        os.link(tarball, target)
    else:
        shutil.copy(tarball, target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    (folder / f"{target.name}.sha256").write_text(f"{digest}  {target.name}\n")
    return root / "pub" / "source"


def xact_source(tarball: Path) -> str:
    """The tarball's src/backend/access/transam/xact.c."""
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
    read-only ones included, gets that much slower (2 ms caps one client near 500 tps)."""
    before = xact_source(tarball)
    start = before.index("\nCommitTransaction(void)\n{\n")
    # After the function's declarations, so the compiler has nothing to warn about.
    line = "\tis_parallel_worker = (s->blockState == TBLOCK_PARALLEL_INPROGRESS);\n"
    at = before.index(line, start) + len(line)
    sleep = f"\n\tpg_usleep({sleep_us});\t/* benchhub test: a slower commit */\n"
    return unified_patch(XACT_C, before, before[:at] + sleep + before[at:])


def comment_patch(tarball: Path) -> str:
    """A patch that changes nothing measurable: a comment appended to xact.c."""
    before = xact_source(tarball)
    after = before + "\n/* benchhub test: a comment, which changes nothing measurable */\n"
    return unified_patch(XACT_C, before, after)


def stale_patch(tarball: Path) -> str:
    """A patch written against a CommitTransaction renamed in someone else's tree: its hunks
    do not apply to 15.18 (the rename meets the prototype first, which the rejects show)."""
    theirs = xact_source(tarball).replace(
        "CommitTransaction(void)", "CommitTransactionGone(void)", 1
    )
    renamed = theirs.replace("Gone(void)", "Renamed(void)", 1)
    return unified_patch(XACT_C, theirs, renamed)
