"""A pytest plugin (loaded by the root conftest.py) with two checks that `.ci/run` turns on:

BENCHHUB_FORBID_SKIPS=1
    A skipped test, or a module skipped at collection, fails with its reason. A test that skips
    on a machine (for want of a server, a client, a browser) is a test we do not have there.
    Expected failures (xfail) are not skips and are left alone.
BENCHHUB_FORBID_PORTS=5432,6379
    The session stops before the first test when the suite's database, cache or Celery broker is
    on one of these ports (a PostgreSQL URL without a port means 5432, a Redis one 6379): they are
    the machine's own PostgreSQL and Redis, which the suite must never use.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

FORBID_SKIPS = "BENCHHUB_FORBID_SKIPS"
FORBID_PORTS = "BENCHHUB_FORBID_PORTS"


def _skips_forbidden() -> bool:
    return os.environ.get(FORBID_SKIPS, "") not in ("", "0")


def _as_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped, and {FORBID_SKIPS} is set (CI runs every test): {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if _skips_forbidden() and report.skipped and not hasattr(report, "wasxfail"):
        _as_failure(report)
    return report


# Modules skipped at collection: reported at the end and fail the session, rather than turned
# into collection errors, which would interrupt the whole run before its first test. Read from
# pytest_collectreport, which a parallel run's controller also receives for its workers'
# skipped modules.
_skipped_modules: list[pytest.CollectReport] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if _skips_forbidden() and report.skipped:
        _skipped_modules.append(report)


def pytest_terminal_summary(terminalreporter, exitstatus: int) -> None:
    for report in _skipped_modules:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        terminalreporter.write_line(
            f"FAILED {report.nodeid}: skipped at collection, and {FORBID_SKIPS} is set: {reason}",
            red=True,
        )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped_modules and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _service_ports() -> dict[str, int]:
    """Where the suite's services are, as Django sees them: {what: port}."""
    from django.conf import settings

    ports = {
        f"DATABASES[{alias!r}]": int(db.get("PORT") or 5432)
        for alias, db in settings.DATABASES.items()
    }
    urls = {"REDIS_URL": settings.REDIS_URL, "CELERY_BROKER_URL": settings.CELERY_BROKER_URL}
    for alias, cache in settings.CACHES.items():
        locations = cache.get("LOCATION") or []
        for location in [locations] if isinstance(locations, str) else locations:
            urls[f"CACHES[{alias!r}]"] = location
    for what, url in urls.items():
        if url and url.startswith(("redis://", "rediss://")):
            ports[what] = urlsplit(url).port or 6379
    return ports


def pytest_sessionstart(session: pytest.Session) -> None:
    forbidden = {int(p) for p in os.environ.get(FORBID_PORTS, "").split(",") if p.strip()}
    if not forbidden:
        return
    used = {what: port for what, port in _service_ports().items() if port in forbidden}
    if used:
        raise pytest.UsageError(
            f"{FORBID_PORTS}={os.environ[FORBID_PORTS]}: the suite would use the machine's own "
            f"services: {', '.join(f'{what} on port {port}' for what, port in used.items())}"
        )
