import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.models import Regression


@pytest.fixture
def regression(agent) -> Regression:
    """A regression of select-only on bench-01 at 4 clients, 14.1 -> 14.2, as detection stores
    one (its figures written here: the detection tests check how they are found)."""
    before = upload(agent, version="14.1", tps={4: [1000.0]}, started_at="2026-10-01T10:00:00Z")
    after = upload(agent, version="14.2", tps={4: [800.0]}, started_at="2026-10-02T10:00:00Z")
    return Regression.objects.create(
        kind="regression",
        comparability_key=after.comparability_key,
        clients=4,
        host=after.host,
        workload=after.workload,
        run_before=before,
        run_after=after,
        before_tps=1000.0,
        after_tps=800.0,
        before_runs=8,
        after_runs=6,
        change=-0.2,
        change_low=-0.21,
        change_high=-0.19,
        p_value=1e-9,
    )


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
