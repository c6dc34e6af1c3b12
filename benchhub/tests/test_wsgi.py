"""The WSGI module gunicorn's workers load (the long-lived heap frozen once loaded) and the
settings they run under (benchhub/gunicorn_conf.py)."""

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import ExitStack

import pytest
import requests

from benchhub.testing import processes


def test_a_worker_freezes_its_loaded_modules_out_of_the_garbage_collectors_walks():
    probe = (
        "import gc, json, sys\n"
        "import benchhub.wsgi\n"
        "print(json.dumps({'frozen': gc.get_freeze_count(),"
        " 'views': 'benchhub.dashboard.views_compare' in sys.modules}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ),
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    # Every view was imported before the freeze (else the first request would import, and
    # allocate, them into the walked generations), and the heap loaded so far is frozen.
    assert loaded["views"] is True
    assert loaded["frozen"] > 50_000


@pytest.mark.slow
def test_a_worker_whose_threads_are_busy_leaves_a_new_connection_to_another(transactional_db):
    """Three connections that send nothing, each holding a thread for gunicorn's 5 s wait for
    data, fill one of two workers of 2 threads: the probes after them go to the thread left
    free at once. A worker that took up to 1,000 connections for its threads (gunicorn's
    default) took some of them too and queued them behind the silent ones."""
    web = processes.Gunicorn(queue=processes.unique_queue(), workers=2, threads=2).start()
    try:
        host, port = web.url.removeprefix("http://").split(":")
        with ExitStack() as silent:
            for _ in range(3):
                silent.enter_context(socket.create_connection((host, int(port))))
            time.sleep(0.5)  # each taken by a worker's thread
            probes = []
            for _ in range(8):
                started = time.monotonic()
                assert requests.get(f"{web.url}/healthz", timeout=30).status_code == 200
                probes.append(time.monotonic() - started)
    finally:
        web.stop()
    assert max(probes) < 2.5, probes
