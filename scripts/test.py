"""Run a part of the test suite the way `make test`, `make test-slow` and `make test-all` do:

    scripts/test.py [--per-cpu N] MARKEXPR [PYTEST ARGS...]

in two phases, each one pytest session on the services `scripts/stack.py exec` provides:
1. the tests MARKEXPR selects that are not marked `alone`, on several processes (pytest-xdist,
   `--dist loadscope` with the scheduler of benchhub.testing.parallel, which keeps a module's
   tests, and every build from source, in one process);
2. then the tests marked `alone`, in one process with nothing else running beside them: they
   measure time under a load of their own, which a neighbouring test would add to.

TEST_WORKERS sets the processes of the first phase: a number, or `auto` (the default: --per-cpu
processes per CPU, 1 unless given, at most 4); 0 runs it in this one process. `make test` runs
2 per CPU: its tests wait on servers, agents and browsers more than they compute. The slow
suite runs 1 per CPU: its builds and pgbench runs use what the CPUs have.

The exit status is pytest's, or the first failing phase's; "no tests collected" (5) in one
phase counts as success when the other ran tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PYTEST = Path(sys.executable).with_name("pytest")
NO_TESTS = 5
MAX_AUTO_WORKERS = 4


def workers(per_cpu: int = 1) -> str:
    configured = os.environ.get("TEST_WORKERS", "auto").strip() or "auto"
    if configured == "auto":
        return str(min(per_cpu * (os.cpu_count() or 1), MAX_AUTO_WORKERS))
    if not configured.isdigit():
        raise SystemExit(f"TEST_WORKERS must be a number or 'auto', not {configured!r}")
    return configured


def phases(markexpr: str, args: list[str], *, per_cpu: int = 1) -> list[list[str]]:
    parallel = ["-n", workers(per_cpu), "--dist", "loadscope"]
    return [
        [str(PYTEST), "-m", f"({markexpr}) and not alone", *parallel, *args],
        [str(PYTEST), "-m", f"({markexpr}) and alone", *args],
    ]


def combined(statuses: list[int]) -> int:
    if all(status == NO_TESTS for status in statuses):
        return NO_TESTS
    return next((status for status in statuses if status not in (0, NO_TESTS)), 0)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    per_cpu = 1
    if argv[0] == "--per-cpu" and len(argv) > 2 and argv[1].isdigit():
        per_cpu, argv = int(argv[1]), argv[2:]
    markexpr, args = argv[0], argv[1:]
    statuses = []
    for command in phases(markexpr, args, per_cpu=per_cpu):
        print(f"test.py: {' '.join(command[1:])}", flush=True)
        statuses.append(subprocess.run(command, check=False).returncode)
    return combined(statuses)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
