"""Fixtures of the end-to-end tests with a real agent: the server it talks to, its work dir."""

import shutil

import pytest

from benchhub.testing import processes


@pytest.fixture
def server(analysis_worker):
    """gunicorn on the test database, its analysis going to a real Celery worker."""
    web = processes.Gunicorn(queue=analysis_worker).start()
    yield web
    web.stop()


@pytest.fixture
def work_dir():
    path = processes.agent_work_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)
