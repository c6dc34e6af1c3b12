"""A cluster's settings as postgresql.conf text: the job's overrides checked and quoted, the
settings the cluster keeps for itself, and the error every cluster operation raises."""

from __future__ import annotations

import socket
from collections.abc import Mapping

# Settings the cluster itself controls; a job overriding them would break the connection.
RESERVED_SETTINGS = frozenset(
    {
        "port",
        "listen_addresses",
        "unix_socket_directories",
        "max_connections",
        "data_directory",
        "config_file",
        "hba_file",
        "ident_file",
        "external_pid_file",
    }
)

SettingValue = str | int | float | bool


class ClusterError(Exception):
    """A cluster operation failed; the message carries the program's output or the log tail."""


def free_port(*, host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the kernel's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def conf_quote(value: SettingValue) -> str:
    """A postgresql.conf literal: always single-quoted, so units and spaces need no thought."""
    text = setting_text(value)
    if any(ch in text for ch in "\n\r\0"):
        raise ClusterError(f"setting value {text!r} contains a line break or NUL")
    # The config lexer treats backslash as an escape inside quotes, and doubles quotes.
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def setting_text(value: SettingValue) -> str:
    """A setting's value as postgresql.conf reads it (booleans as on/off)."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def render_overrides(overrides: Mapping[str, SettingValue]) -> str:
    """The postgresql.conf lines for a job's overrides, in the job's order."""
    lines = []
    for name, value in overrides.items():
        key = name.strip().lower()
        if not key or not all(ch.isalnum() or ch in "_." for ch in key) or key[0].isdigit():
            raise ClusterError(f"not a PostgreSQL setting name: {name!r}")
        if key in RESERVED_SETTINGS:
            raise ClusterError(f"setting {key} is managed by the runner and cannot be overridden")
        lines.append(f"{key} = {conf_quote(value)}\n")
    return "".join(lines)
