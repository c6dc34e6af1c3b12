"""A pytest plugin (loaded by the root conftest.py) that says which tests share a process when
the suite runs on several (pytest-xdist with ``--dist loadscope``, as scripts/test.py runs it):

- every test that builds PostgreSQL from source runs in one process: the session's build cache
  lives in that process (benchhub.testing.builds), and a second one would compile the same
  release again instead of reusing it. Those tests are the ones in BUILD_MODULES;
- every other test runs with the rest of its module, so a module's fixtures (a live server, an
  agent, a data set) are set up once, as in a serial run;
- the groups that take minutes are handed out first, longest first (LONGEST_FIRST), and the rest
  after them. xdist's own order (most tests first, then the order of collection) handed out the
  one-test stop fault module, then 12 minutes long, last: one worker ran it alone at the end
  while the other had finished. Longest first, the last groups handed out are short ones, and the
  workers end close together.

The scheduler runs in the controlling process, which sees test ids, not fixtures, so the build
modules are named here; a test that asks for the builds in a module the list leaves out fails.
"""

from __future__ import annotations

from typing import Any

import pytest

BUILDS = "builds-from-source"
BUILD_MODULES = frozenset(
    {
        "benchhub/bisections/tests/test_it_finds_the_commit_e2e.py",
        "benchhub/jobs/tests/test_recipe_e2e.py",
        "benchhub/jobs/tests/test_try_e2e.py",
        "runners/tests/test_build_e2e.py",
    }
)

# The slow suite's longest groups, longest first, from the CI run's --durations (2026-12-07, the
# 2-core VM, seconds for the whole group): the builds from source (~900), the API schema's
# generated requests (~260), the experiments end to end (~220), the agent end to end (~200), the
# stop fault test (~150 since it stops one start per moment), the stack tests (~150), the job-code
# fuzzing (~140 of setup), the load test (~120). A group missing from the list goes after them,
# in xdist's order.
LONGEST_FIRST = (
    BUILDS,
    "benchhub/tests/test_api_schema.py",
    "benchhub/workloads/tests/test_experiments_e2e.py",
    "benchhub/jobs/tests/test_agent_e2e.py",
    "scripts/tests/test_stop_faults.py",
    "scripts/tests/test_stack.py",
    "runners/tests/test_jobcode_fuzz.py",
    "bench/tests/test_load.py",
)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def group_of(nodeid: str) -> str:
    module = module_of(nodeid)
    return BUILDS if module in BUILD_MODULES else module


def rank(group: str) -> int:
    """Where a group goes in the order work is handed out: LONGEST_FIRST's, then the rest."""
    return LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)


def builds_unlisted(item: pytest.Item) -> bool:
    """Whether a test builds from source (it asks for ``pg15_release_builds``) in a module
    BUILD_MODULES does not name."""
    return (
        "pg15_release_builds" in getattr(item, "fixturenames", ())
        and module_of(item.nodeid) not in BUILD_MODULES
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if builds_unlisted(item):
        pytest.fail(
            f"{module_of(item.nodeid)} builds from source but is not in "
            "benchhub.testing.parallel.BUILD_MODULES: on several processes its builds would "
            "not share the session's build cache",
            pytrace=False,
        )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class ByModuleAndBuilds(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # The queue is complete by the first assignment; reordered once, before anything
            # is handed out (a stable sort keeps xdist's order among the unlisted groups).
            if not self.ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: rank(unit[0]))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return ByModuleAndBuilds(config, log)
