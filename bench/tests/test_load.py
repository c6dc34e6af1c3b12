"""`make load --quick` end to end: agents and readers for 20 s, no error, no lost result."""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_it_loses_no_result_and_answers_every_request_under_load(tmp_path):
    output = tmp_path / "load.json"
    base = os.environ["DATABASE_URL"]
    database = f"{urlsplit(base).path.lstrip('/') or 'benchhub'}_load_quick"
    argv = [sys.executable, "-m", "bench.load", "--quick", "--database", database,
            "--output", str(output)]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(output.read_text())
    figures = {f["name"]: f["value"] for f in report["figures"]}
    assert figures["errors (5xx, connection)"] == 0
    assert figures["accepted uploads not stored"] == 0
    assert figures["jobs done without exactly one run"] == 0
    assert figures["uploads accepted"] > 0 and figures["jobs done"] > 0
    requests = report["options"]["details"]["requests"]
    assert {"claim", "upload", "home page", "status API", "compare page", "run page",
            "experiments page"} <= set(requests)  # fmt: skip
