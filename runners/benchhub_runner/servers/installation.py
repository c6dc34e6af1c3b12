"""An installation of PostgreSQL: a bin directory, the version its postgres reports and the
tools it holds; and the error of a version the agent cannot provide."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .bindirs import CLIENT_TOOLS, SERVER_TOOLS
from .versions import Version, VersionError, version_major, version_parse

# "built": compiled from source on this host (benchhub_runner.build).
Origin = Literal["system", "prebuilt", "configured", "built"]

_SERVER_VERSION_RE = re.compile(r"\(PostgreSQL\)\s+(\d+(?:\.\d+)*(?:(?:alpha|beta|rc|devel)\d*)?)")


class ProvisionError(Exception):
    """The requested PostgreSQL version could not be provided; the message says what was tried."""


@dataclass(frozen=True)
class Installation:
    """PostgreSQL binaries in one bin directory.

    ``version`` is what ``postgres --version`` reports ("13.23", "14beta1"). ``libdir`` is set
    when the binaries need their own shared libraries on LD_LIBRARY_PATH (prebuilt ones).
    """

    bindir: Path
    version: str
    origin: Origin
    libdir: Path | None = None
    tools: frozenset[str] = field(default_factory=frozenset)

    @property
    def major(self) -> str:
        return version_major(self.version)

    def has(self, tool: str) -> bool:
        return tool in self.tools

    def tool(self, name: str) -> Path:
        """Path of one program; ProvisionError when this installation lacks it."""
        if name not in self.tools:
            raise ProvisionError(
                f"PostgreSQL {self.version} in {self.bindir} has no {name} "
                f"(it has {', '.join(sorted(self.tools)) or 'nothing'})"
            )
        return self.bindir / name

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment to run this installation's programs in (``base`` defaults to os.environ)."""
        env = dict(os.environ if base is None else base)
        if self.libdir is not None:
            # Prebuilt binaries carry a RUNPATH of $ORIGIN/../lib, but the tools they exec
            # (initdb -> postgres) and dlopen'ed extensions are safer with the path set too.
            parts = [str(self.libdir), *filter(None, env.get("LD_LIBRARY_PATH", "").split(":"))]
            env["LD_LIBRARY_PATH"] = ":".join(parts)
        return env


def installation_from_bindir(
    bindir: Path, *, origin: Origin = "configured", libdir: Path | None = None
) -> Installation:
    """Describe the binaries in ``bindir``, reading the version from ``postgres --version``."""
    bindir = Path(bindir)
    postgres = bindir / "postgres"
    if not os.access(postgres, os.X_OK):
        raise ProvisionError(f"no executable postgres in {bindir}")
    probe = Installation(bindir=bindir, version="0", origin=origin, libdir=libdir)
    try:
        done = subprocess.run(
            [str(postgres), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            env=probe.env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvisionError(f"could not run {postgres} --version: {exc}") from exc
    match = _SERVER_VERSION_RE.search(done.stdout)
    if done.returncode != 0 or not match:
        output = (done.stdout + done.stderr).strip()
        raise ProvisionError(f"{postgres} --version failed (exit {done.returncode}): {output}")
    try:
        version_parse(match.group(1))
    except VersionError as exc:
        raise ProvisionError(f"{postgres} reports a version BenchHub cannot read: {exc}") from None
    tools = frozenset(
        name for name in SERVER_TOOLS + CLIENT_TOOLS if os.access(bindir / name, os.X_OK)
    )
    return Installation(
        bindir=bindir, version=match.group(1), origin=origin, libdir=libdir, tools=tools
    )


def requested_version(requested: str) -> Version:
    """The version a job asks for; ProvisionError when it is not a version name."""
    try:
        return version_parse(requested)
    except VersionError as exc:
        raise ProvisionError(str(exc)) from None
