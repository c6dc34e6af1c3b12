import sys
import tempfile
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.models import Regression
from benchhub.regressions.tests.series import regression_stored
from benchhub.testing import processes


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


@pytest.fixture
def smtp_server():
    """(port, maildir) of a real SMTP server process (aiosmtpd) filing each message it takes."""
    port, maildir = processes.free_port(), Path(tempfile.mkdtemp(prefix="benchhub-mail-"))
    argv = [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}"]
    argv += ["-c", "aiosmtpd.handlers.Mailbox", str(maildir / "box")]
    server = processes.local_server(argv, port=port, name="smtp")
    yield port, maildir / "box"
    server.stop()


@pytest.fixture
def receiver():
    """(port, log) of a real HTTP server process answering every POST with 200."""
    port, log = processes.free_port(), Path(tempfile.mkdtemp(prefix="benchhub-hook-")) / "calls"
    argv = [sys.executable, "-m", "benchhub.testing.receivers", str(port), str(log), "0"]
    service = processes.local_server(argv, port=port, name="webhook-receiver")
    yield port, log
    service.stop()
