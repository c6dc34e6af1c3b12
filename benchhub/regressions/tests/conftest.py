import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.models import Regression
from benchhub.regressions.tests.series import regression_stored


@pytest.fixture
def regression(agent) -> Regression:
    """A regression of select-only on bench-01 at 4 clients, 14.1 -> 14.2, as detection stores
    one (its figures written here: the detection tests check how they are found)."""
    before = upload(agent, version="14.1", tps={4: [1000.0]}, started_at="2026-10-01T10:00:00Z")
    after = upload(agent, version="14.2", tps={4: [800.0]}, started_at="2026-10-02T10:00:00Z")
    return regression_stored(before, after, before_runs=8)


@pytest.fixture
def alice_client(alice) -> APIClient:
    client = APIClient()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client
