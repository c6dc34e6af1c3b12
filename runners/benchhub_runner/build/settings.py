"""How this host builds: where releases come from, parallelism, ccache, the disk budget.

Read from the ``[build]`` table of the agent's configuration (see ``config.py``)::

    [build]
    release_url = "https://ftp.postgresql.org/pub/source"   # v<ver>/postgresql-<ver>.tar.bz2
    max_cache_gb = 20        # installs beyond this go, least recently used first
    jobs = 0                 # make -j; 0 = this host's CPU count
    ccache = "auto"          # "auto" (when installed), "on" (required), "off"
    ccache_dir = "/var/cache/benchhub-ccache"   # default <cache_dir>/builds/ccache
    cc = "gcc"
    source_dirs = ["/srv/postgresql"]   # where a tarball `path` or a local git url may point
    allow_private_sources = false       # true: a tarball or git url may name a private address

A tarball source given by ``path`` names a file on this host, and a git source whose url is a
path or file:// names a repository on it; only those under ``source_dirs`` (none by default)
may be used, so a job cannot make the agent read the host's other files or clone its other
repositories.

A tarball or git source given by a network url is fetched from a public address only
(benchhub_runner.transport.urlpolicy: not loopback, private, link-local, ... in any IPv6 spelling);
``allow_private_sources`` is the host owner's word that its lab's private addresses may be
fetched from too. ``release_url`` is the host owner's own and is not checked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DEFAULT_RELEASE_URL = "https://ftp.postgresql.org/pub/source"
CcacheMode = Literal["auto", "on", "off"]
_CCACHE_MODES: dict[str, CcacheMode] = {"auto": "auto", "on": "on", "off": "off"}


@dataclass(frozen=True)
class BuildSettings:
    release_url: str = DEFAULT_RELEASE_URL
    max_cache_gb: float = 20.0
    jobs: int = 0
    ccache: CcacheMode = "auto"
    ccache_dir: Path | None = None
    cc: str = "gcc"
    source_dirs: tuple[Path, ...] = ()
    allow_private_sources: bool = False

    @property
    def make_jobs(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)

    @property
    def max_cache_bytes(self) -> int:
        return int(self.max_cache_gb * 1024**3)


def build_settings_from(values: Mapping[str, Any]) -> BuildSettings:
    """Settings from a ``[build]`` table; ValueError names the key that is wrong."""
    known = {"release_url", "max_cache_gb", "jobs", "ccache", "ccache_dir", "cc", "source_dirs",
             "allow_private_sources"}  # fmt: skip
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown [build] keys: {', '.join(unknown)}")
    ccache = _CCACHE_MODES.get(str(values.get("ccache", "auto")))
    if ccache is None:
        raise ValueError(f"[build] ccache must be auto, on or off, not {values['ccache']!r}")
    cc = str(values.get("cc", "gcc"))
    if not cc or any(ch.isspace() for ch in cc):
        raise ValueError(f"[build] cc must be one program name or path, not {cc!r}")
    jobs = int(values.get("jobs", 0))
    max_gb = float(values.get("max_cache_gb", 20))
    if jobs < 0 or max_gb <= 0:
        raise ValueError("[build] jobs must be >= 0 and max_cache_gb > 0")
    dirs = values.get("source_dirs", [])
    if not isinstance(dirs, list) or not all(
        isinstance(d, str) and d.startswith("/") for d in dirs
    ):
        raise ValueError("[build] source_dirs must be a list of absolute directory paths")
    allow_private = values.get("allow_private_sources", False)
    if not isinstance(allow_private, bool):
        raise ValueError("[build] allow_private_sources must be true or false")
    return BuildSettings(
        release_url=str(values.get("release_url", DEFAULT_RELEASE_URL)).rstrip("/"),
        max_cache_gb=max_gb,
        jobs=jobs,
        ccache=ccache,
        ccache_dir=Path(values["ccache_dir"]) if values.get("ccache_dir") else None,
        cc=cc,
        source_dirs=tuple(Path(d) for d in dirs),
        allow_private_sources=allow_private,
    )
