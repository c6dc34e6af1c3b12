"""A pytest plugin (loaded by the root conftest.py) that says which tests share a process when
the suite runs on several (pytest-xdist with ``--dist loadscope``, as scripts/test.py runs it):

- every test that builds PostgreSQL from source runs in one process: the session's build cache
  lives in that process (benchhub.testing.builds), and a second one would compile the same
  release again instead of reusing it. Those tests are the ones in BUILD_MODULES;
- every other test runs with the rest of its module, so a module's fixtures (a live server, an
  agent, a data set) are set up once, as in a serial run.

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


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def group_of(nodeid: str) -> str:
    module = module_of(nodeid)
    return BUILDS if module in BUILD_MODULES else module


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
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByModuleAndBuilds(config, log)
