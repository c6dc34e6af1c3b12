"""Server settings a job may not set, in its overrides or in its SQL's SET: those that run
commands, load code or name files; and any override outside the allowlist (overrides.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .overrides import override_reason
from .refusals import Refusal

_SETTING_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"_command$"), "runs a shell command on the host"),
    # plperl.on_init, plperl.on_plperlu_init...: code run when an interpreter starts.
    (re.compile(r"(^|[._])on_\w*init$"), "runs code when the server starts an interpreter"),
    (re.compile(r"(^|_)librar(y|ies)$"), "loads a shared library into the server"),
    (re.compile(r"preload_libraries$"), "loads a shared library into the server"),
    (
        re.compile(r"^(dynamic_library_path|extension_control_path)$"),
        "says where the server loads code from",
    ),
    (re.compile(r"^jit_provider$"), "loads a shared library into the server"),
    (re.compile(r"^include"), "includes another configuration file"),
    (re.compile(r"_(file|dir|directory|directories|filename)$"), "names a file on the host"),
    (re.compile(r"_conninfo$"), "makes the server connect elsewhere"),
    (
        re.compile(r"^(listen_addresses|port|unix_socket_\w+)$"),
        "is the agent's connection to the server",
    ),
    (re.compile(r"^(data_directory|config_file|hba_file|ident_file)$"), "names a file on the host"),
)


def setting_reason(name: str) -> str | None:
    """Why a server setting may not come from a job, or None when it may."""
    key = name.strip().lower()
    for pattern, reason in _SETTING_RULES:
        if pattern.search(key):
            return reason
    return None


def check_settings(overrides: Mapping[str, Any], *, field: str) -> list[Refusal]:
    """Refusals for server setting overrides: a denied setting says why it is dangerous, any
    other setting outside the allowlist (overrides.py) that it is not on it."""
    return [
        Refusal(f"{field}.{name}", 0, f"setting {name} {why}")
        for name in overrides
        if (why := setting_reason(str(name)) or override_reason(str(name)))
    ]
