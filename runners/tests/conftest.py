"""Shared fixtures for the runner tests: captured pgbench outputs, PostgreSQL installations and
directories a server can use.

The tests themselves import no Django: the top-level suite runs ``pytest runners/tests`` from the
repo root, whose conftest.py provides the programs (``prebuilt``, ``client_bindir``), got the way
the agent gets them. Servers are prebuilt 13 and 14 from the npm registry, cached between runs.
"""

from __future__ import annotations

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

from benchhub.testing import installs  # noqa: E402
from benchhub.testing.installs import PG15_SHA256, PG15_TARBALL, PG15_URL  # noqa: E402, F401

from benchhub_runner.servers.installation import Installation  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "pgbench"


def open_tmpdir(prefix: str) -> Path:
    """A fresh directory under the system temp dir that the unprivileged server user can reach.

    pytest's own tmp_path lives under a 0700 directory, which benchhub-runner cannot traverse.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def prebuilt13(prebuilt) -> Installation:
    return prebuilt("13")


@pytest.fixture(scope="session")
def prebuilt14(prebuilt) -> Installation:
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
def pg15_tarball() -> Path:
    """The PostgreSQL 15.18 source tarball (benchhub.testing.installs.pg15_source_tarball)."""
    return installs.pg15_source_tarball()
