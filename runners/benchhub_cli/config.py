"""Where the command finds its server and token: the environment (BENCHHUB_SERVER,
BENCHHUB_TOKEN) over the file `benchhub login` writes, `$XDG_CONFIG_HOME/benchhub/config.json`
(default `~/.config/benchhub/config.json`), kept readable by its owner only (0600)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from benchhub_cli.errors import CliError


@dataclass(frozen=True)
class Settings:
    server: str
    token: str  # "" when none: reads are open to anonymous users


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "benchhub" / "config.json"


def config_read() -> dict[str, str]:
    """The saved settings ({} when `benchhub login` never ran); a damaged file is an error."""
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CliError(
            f"{path}: cannot read the saved settings ({exc}); run benchhub login"
        ) from None
    if not isinstance(data, dict):
        raise CliError(f"{path}: not a JSON object; run benchhub login")
    return {k: v for k, v in data.items() if isinstance(v, str)}


def config_write(*, server: str, token: str) -> Path:
    """Save the server and token, creating the file with mode 0600 (never readable by others,
    not even for an instant) and its directory with 0700."""
    path = config_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump({"server": server, "token": token}, out)
        out.write("\n")
    os.replace(temporary, path)
    return path


def settings_resolve() -> Settings:
    """The environment's server and token over the saved ones; no server is a usage error."""
    saved = config_read()
    server = os.environ.get("BENCHHUB_SERVER") or saved.get("server", "")
    token = os.environ.get("BENCHHUB_TOKEN") or saved.get("token", "")
    if not server:
        raise CliError("no server: run benchhub login --server URL, or set BENCHHUB_SERVER")
    return Settings(server=server.rstrip("/"), token=token)
