"""Fixtures for the server's tests: personas and API clients.

Personas: alice is staff and runs the instance; bob is a signed-in person whom staff trust to run
jobs on every host (a HostGrant on tag `*`); mallory is signed in with no rights on any host; the
agent on host bench-01 holds a runner token for that host only.
"""

import uuid
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from benchhub.celery import app as celery_app
from benchhub.hosts.access import ALL_HOSTS
from benchhub.hosts.models import HostGrant
from benchhub.hosts.services import runner_token_create
from benchhub.testing import processes
from benchhub.testing.browser import browser, page  # noqa: F401 - fixtures for browser tests


@dataclass
class Agent:
    host_name: str
    token: str
    client: APIClient


@pytest.fixture(autouse=True)
def _own_cache_namespace(settings):
    """Each test counts failed sign-ins and tokens (accounts.ratelimit) in a cache namespace of
    its own in the real Redis, so the failures of one test never throttle the next."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user(
        "alice", password="alice-pass-1", is_staff=True, is_superuser=True
    )


@pytest.fixture
def bob(db):
    bob = get_user_model().objects.create_user("bob", password="bob-pass-1")
    HostGrant.objects.create(tag=ALL_HOSTS, user=bob)
    return bob


@pytest.fixture
def mallory(db):
    """Signed in, not staff, no right to run anything on any host."""
    return get_user_model().objects.create_user("mallory", password="mallory-pass-1")


@pytest.fixture
def anon_client():
    return APIClient()


def _agent(host_name: str) -> Agent:
    _, plaintext = runner_token_create(host_name=host_name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return Agent(host_name=host_name, token=plaintext, client=client)


@pytest.fixture
def agent(db) -> Agent:
    """The agent of host bench-01."""
    return _agent("bench-01")


@pytest.fixture
def other_agent(db) -> Agent:
    """The agent of another host, bench-02."""
    return _agent("bench-02")


def _route(*, routes: dict) -> None:
    """Point this process's task routes at `routes`. Celery caches its router on first publish
    (any earlier test that uploaded a run), so the cached router is rebuilt too."""
    celery_app.conf.task_routes = routes
    celery_app.amqp.flush_routes()
    # A property in celery-types' stubs; at run time a plain attribute, cached on first publish.
    celery_app.amqp.router = celery_app.amqp.Router()  # type: ignore[misc]


@pytest.fixture
def analysis_worker(transactional_db):
    """A real Celery worker on the test database, consuming a queue of this test's own, so a
    worker of a running `make up` on the same Redis never takes the test's tasks."""
    queue = processes.unique_queue()
    worker = processes.celery_worker(queue).start()
    routes = celery_app.conf.task_routes
    _route(
        routes={
            "jobs.*": {"queue": queue},
            "results.*": {"queue": queue},
            "regressions.*": {"queue": queue},
            "bisections.*": {"queue": queue},
        }
    )
    try:
        yield queue
    finally:
        _route(routes=routes)
        worker.stop()
        print(f"--- celery worker log ({worker.log}) ---\n{worker.output()[-4000:]}")
