"""The WSGI module gunicorn's workers load: the long-lived heap is frozen once loaded."""

import json
import os
import subprocess
import sys


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
