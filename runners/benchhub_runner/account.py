"""The unprivileged OS account that PostgreSQL's programs run as when the caller is root.

initdb and postgres refuse to run as root. The agent runs them as `benchhub-runner`, the
development stack (scripts/stack.py) as `benchhub`; either account is created on first use, and
when the caller is not root everything runs as the caller.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass
from typing import Any

RUNNER_USER = "benchhub-runner"


class AccountError(Exception):
    """The account could not be created; the message carries useradd's reason."""


@dataclass(frozen=True)
class Account:
    """An OS user that server programs run as."""

    name: str
    uid: int
    gid: int

    def popen_kwargs(self) -> dict[str, Any]:
        """subprocess arguments that run a program as this user, with no supplementary groups."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def runner_account(*, name: str = RUNNER_USER) -> Account | None:
    """None when not root (run as self); else the unprivileged account, created if missing."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        done = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            capture_output=True,
            text=True,
            check=False,
        )
        # Exit 9 is "already exists": another process created it between our lookup and useradd.
        if done.returncode not in (0, 9):
            raise AccountError(f"useradd {name} failed: {done.stderr.strip()}") from None
        entry = pwd.getpwnam(name)
    return Account(name=name, uid=entry.pw_uid, gid=entry.pw_gid)
