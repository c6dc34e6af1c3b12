"""The suite on several processes (scripts/test.py): which tests share a process, and that the
CI checks still see what the workers see. Each runs a small pytest session of its own on two
xdist workers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchhub.testing import parallel
from benchhub.testing.installs import ROOT

pytest_plugins = ["pytester"]

sys.path.insert(0, str(ROOT / "scripts"))
import test as runner  # noqa: E402 - scripts/test.py, not a package

RECORDING_CONFTEST = """
import json, os, pytest

@pytest.fixture
def pg15_release_builds():
    return "built"

@pytest.fixture(autouse=True)
def _record(request):
    with open(os.environ["RECORD"], "a") as out:
        out.write(json.dumps([request.node.nodeid, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""


def _module(builds: int, plain: int) -> str:
    tests = [f"def test_builds_{i}(pg15_release_builds):\n    pass\n" for i in range(builds)]
    tests += [f"def test_plain_{i}():\n    pass\n" for i in range(plain)]
    return "\n".join(tests)


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("BENCHHUB_FORBID_SKIPS", raising=False)

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(
            "-p", "no:django", "-p", "no:cacheprovider", "-p", "benchhub.testing.parallel",
            "-p", "benchhub.testing.ci_checks", "-n", "2", "--dist", "loadscope", *args,
        )  # fmt: skip

    return run


def test_it_keeps_each_module_and_every_build_from_source_in_one_process(
    pytester: pytest.Pytester, session, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = pytester.path / "record.jsonl"
    monkeypatch.setenv("RECORD", str(record))
    pytester.makeconftest(RECORDING_CONFTEST)
    build_a, build_b = "runners/tests/test_build_e2e.py", "benchhub/jobs/tests/test_try_e2e.py"
    for path, text in [
        (build_a, _module(3, 6)),
        (build_b, _module(3, 6)),
        ("t/test_c.py", _module(0, 6)),
    ]:
        (pytester.path / path).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / path).write_text(text)
    session().assert_outcomes(passed=24)
    worker_of = dict(json.loads(line) for line in record.read_text().splitlines())
    assert len(worker_of) == 24
    groups: dict[str, set[str]] = {}
    for nodeid, worker in worker_of.items():
        group = "builds" if "::test_builds_" in nodeid else nodeid.split("::")[0]
        groups.setdefault(group, set()).add(worker)
    assert groups.keys() == {"builds", build_a, build_b, "t/test_c.py"}
    assert all(len(workers) == 1 for workers in groups.values()), groups
    # Both workers took part, so the grouping above was not one process doing everything.
    assert len(set(worker_of.values())) == 2


def test_it_hands_out_the_longest_groups_first(
    pytester: pytest.Pytester, session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long group of one test, collected last, starts first on its worker: in xdist's order
    (most tests first) it would start last, after the other groups' tests."""
    record = pytester.path / "record.jsonl"
    monkeypatch.setenv("RECORD", str(record))
    pytester.makeconftest(RECORDING_CONFTEST)
    long = "scripts/tests/test_stop_faults.py"
    assert long in parallel.LONGEST_FIRST
    for path, text in [("a/test_a.py", _module(0, 6)), ("a/test_b.py", _module(0, 6)),
                       (long, _module(0, 1))]:  # fmt: skip
        (pytester.path / path).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / path).write_text(text)
    session().assert_outcomes(passed=13)
    started = [json.loads(line) for line in record.read_text().splitlines()]
    worker = next(worker for nodeid, worker in started if nodeid.startswith(long))
    assert next(nodeid for nodeid, w in started if w == worker) == f"{long}::test_plain_0"


def test_a_test_that_builds_outside_the_listed_modules_fails_saying_so(
    pytester: pytest.Pytester, session, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(RECORDING_CONFTEST)
    pytester.makepyfile(test_elsewhere=_module(builds=1, plain=1))
    monkeypatch.setenv("RECORD", str(pytester.path / "record.jsonl"))
    result = session("-ra")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "test_elsewhere.py builds from source but is not in *.BUILD_MODULES*",
            "ERROR test_elsewhere.py::test_builds_0 *",
        ]
    )


def test_a_module_skipped_on_a_worker_still_fails_a_ci_run(
    pytester: pytest.Pytester, session, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_skipped="import pytest\npytest.skip('no server here', allow_module_level=True)\n",
        test_fine="def test_fine():\n    pass\n",
    )
    assert session().ret == 0
    monkeypatch.setenv("BENCHHUB_FORBID_SKIPS", "1")
    result = session()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_skipped.py: skipped at collection*no server here*"])


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [([0, 5], 0), ([5, 0], 0), ([5, 5], 5), ([1, 0], 1), ([0, 1], 1), ([5, 2], 2), ([0, 0], 0)],
)
def test_the_runner_passes_when_every_phase_passed_or_had_nothing_to_run(
    statuses: list[int], expected: int
) -> None:
    assert runner.combined(statuses) == expected


def test_the_runner_runs_the_parallel_part_then_the_alone_tests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEST_WORKERS", "3")
    parallel, alone = runner.phases("not slow", ["-x"])
    assert parallel[1:] == ["-m", "(not slow) and not alone", "-n", "3", "--dist", "loadscope",
                            "-x"]  # fmt: skip
    assert alone[1:] == ["-m", "(not slow) and alone", "-x"]
    assert Path(parallel[0]).name == "pytest"
    monkeypatch.setenv("TEST_WORKERS", "auto")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert (runner.workers(), runner.workers(per_cpu=2), runner.workers(per_cpu=3)) == (
        "2",
        "4",
        "4",
    )
    monkeypatch.setenv("TEST_WORKERS", "many")
    with pytest.raises(SystemExit, match="TEST_WORKERS"):
        runner.workers()
