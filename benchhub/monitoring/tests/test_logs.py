"""LOG_FORMAT=json: the web server's and the Celery worker's logs are one JSON object a line;
a format or a metrics token that cannot work stops the start with the variable's name."""

import json
import os
import subprocess
import sys
import time

from benchhub.testing import processes

SNIPPET = """
import logging, django
django.setup()
log = logging.getLogger("benchhub.probe")
log.info("uploaded %s", "run-1", extra={"host": "bench-01"})
try:
    1 / 0
except ZeroDivisionError:
    log.exception("it broke")
"""


def run_django(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SNIPPET],
        cwd=processes.ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchhub.settings", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_it_logs_one_json_object_a_line():
    done = run_django({"LOG_FORMAT": "json"})
    assert done.returncode == 0, done.stderr
    first, second = [json.loads(line) for line in done.stderr.splitlines()[-2:]]
    assert first["message"] == "uploaded run-1"
    assert first["level"] == "INFO"
    assert first["logger"] == "benchhub.probe"
    assert first["host"] == "bench-01"
    assert first["time"].endswith("+00:00")
    assert second["level"] == "ERROR"
    assert "ZeroDivisionError" in second["exception"]


def test_it_logs_plain_lines_by_default():
    done = run_django({"LOG_FORMAT": ""})
    assert done.returncode == 0, done.stderr
    assert " INFO benchhub.probe: uploaded run-1" in done.stderr
    assert not done.stderr.lstrip().startswith("{")


def test_it_refuses_an_unknown_format_or_a_short_metrics_token():
    done = run_django({"LOG_FORMAT": "xml"})
    assert done.returncode != 0
    assert "LOG_FORMAT must be one of plain, json, not 'xml'" in done.stderr
    done = run_django({"BENCHHUB_METRICS_TOKEN": "short"})
    assert done.returncode != 0
    assert "BENCHHUB_METRICS_TOKEN must be at least 32 characters" in done.stderr


def test_the_celery_worker_logs_json_too(transactional_db):
    worker = processes.celery_worker(processes.unique_queue(), env={"LOG_FORMAT": "json"})
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while "ready" not in worker.output() and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        worker.stop()
    entries = []
    for line in worker.output().splitlines():
        if line.startswith("{"):
            entries.append(json.loads(line))
    ready = [e for e in entries if e["message"].endswith("ready.")]
    assert ready and ready[0]["logger"] == "celery.apps.worker", worker.output()[-2000:]
