"""Production settings: `check --deploy` is clean, and there is no usable default secret."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


# Not the test process's: the browser fixture sets DJANGO_ALLOW_ASYNC_UNSAFE for Playwright.
DEV_ONLY = ("DEBUG", "BENCHHUB_SECURE", "DJANGO_ALLOW_ASYNC_UNSAFE")


def manage(*args: str, **env: str | None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in DEV_ONLY}
    for name, value in env.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "BENCHHUB_SECURE": "true",
    "DEBUG": "0",
    "ALLOWED_HOSTS": "bench.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://bench.example.org",
}


def test_it_passes_check_deploy_with_production_settings():
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING",
        SECRET_KEY=secrets.token_urlsafe(64), **PRODUCTION,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_it_flags_a_weak_secret_in_check_deploy():
    result = manage("check", "--deploy", SECRET_KEY="dev", **PRODUCTION)
    assert "security.W009" in result.stdout + result.stderr


def test_it_refuses_to_start_without_a_secret_key():
    for missing in (None, ""):
        result = manage("check", SECRET_KEY=missing)
        assert result.returncode != 0
        assert "SECRET_KEY must be set in the environment" in result.stderr
