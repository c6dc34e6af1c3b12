"""deploy/prometheus/benchhub-rules.yml: promtool accepts it, its unit tests show each alert
firing when it should (a silent agent's two days later too), and those tests can fail."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from benchhub.testing import installs
from benchhub.testing.processes import ROOT

RULES_DIR = ROOT / "deploy" / "prometheus"
RULES = RULES_DIR / "benchhub-rules.yml"
RULE_TESTS = RULES_DIR / "benchhub-rules.test.yml"


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [installs.promtool(), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=120,
    )


def test_it_passes_promtools_check():
    done = promtool("check", "rules", str(RULES), cwd=RULES_DIR)
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_passes_its_unit_tests_which_cover_every_alert():
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    tested = {case["alertname"] for test in tests for case in test["alert_rule_test"]}
    assert tested == {rule["alert"] for rule in rules}
    done = promtool("test", "rules", str(RULE_TESTS), cwd=RULES_DIR)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The rule this file replaced: an agent silent for more than a day was forgotten.
        (
            "> 600\n",
            "> 600 and max by (host) (benchhub_agent_last_seen_age_seconds) < 86400\n",
        ),
        ("time() - max by (queue)", "0 * time() + max by (queue)"),
    ],
)
def test_its_unit_tests_fail_on_a_rule_that_stops_firing(tmp_path, old, new):
    text = RULES.read_text()
    assert old in text
    (tmp_path / RULES.name).write_text(text.replace(old, new, 1))
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    done = promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path)
    assert done.returncode != 0
    assert "FAILED" in done.stdout + done.stderr
