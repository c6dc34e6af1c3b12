"""The test session's builds from source, shared the way a benchmark host shares them.

- ``build_cache()``: one agent cache directory for the whole session. Every test that builds
  PostgreSQL (through ``ensure_build`` or a real agent) uses it, so an install made for one
  module is reused by another whose build has the same inputs, and git build trees carry over
  from one test to the next, as on a host. It is new every session: a session proves its builds.
- ``ccache_dir()``: the compiler cache, kept between sessions in the test cache, so that only a
  fresh machine compiles PostgreSQL cold (about 8 minutes of a 2-core machine).
- ``pg15_release_builds()``: the session's two builds of the 15.18 release (plain, and patched
  to slow every commit), built once by the first test that asks. The plain one is the only
  build of the session that may start from a cold ccache; tests that build anything else from
  source ask for it first, so that the cold path is paid, and proven, in one place.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchhub_runner.build import Build, BuildProgress, BuildSettings, ensure_build, spec_parse

from benchhub.testing import installs
from benchhub.testing.pgsource import http_server, release_mirror, slow_commit_patch


@functools.cache
def build_cache() -> Path:
    """This session's agent cache directory (``cache_dir``; builds live in its ``builds/``).
    Traversable by the unprivileged server user, unlike pytest's temporary directories."""
    path = Path(tempfile.mkdtemp(prefix="benchhub-builds-"))
    path.chmod(0o755)
    return path


def build_cache_remove() -> None:
    """Remove the session's build cache, if this session made one."""
    if build_cache.cache_info().currsize:
        shutil.rmtree(build_cache(), ignore_errors=True)
        build_cache.cache_clear()


def ccache_dir() -> Path:
    return installs.prebuilt_cache() / "ccache-builds"


def agent_build_env(work_dir: Path, *, source_dirs: Sequence[Path] = ()) -> dict[str, str]:
    """A real agent's environment for building: the session's build cache and the kept ccache
    (an agent.toml written into ``work_dir``). ``source_dirs``: the directories its local git
    repositories (and tarball paths) may be under, as a host owner lists them."""
    config = work_dir / "agent.toml"
    listed = json.dumps([str(d) for d in source_dirs])  # a JSON list of strings is TOML too
    config.write_text(
        f'heartbeat_interval_s = 1\n\n[build]\nccache_dir = "{ccache_dir()}"\n'
        f"source_dirs = {listed}\n"
    )
    return {"BENCHHUB_CONFIG": str(config), "BENCHHUB_CACHE_DIR": str(build_cache())}


def release_spec(**extra: Any) -> dict[str, Any]:
    """The spec of the plain 15.18 release build (with pg_stat_statements)."""
    source = {"kind": "release", "version": "15.18"}
    return {"name": "15.18", "source": source, "contrib": ["pg_stat_statements"], **extra}


def slow_commit(tarball: Path) -> dict[str, str]:
    """The slow-commit patch as a spec's patch entry."""
    text = slow_commit_patch(tarball)
    return {"name": "slow-commit.patch", "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "text": text}  # fmt: skip


@dataclass
class ReleaseBuilds:
    """The session's 15.18 builds, the mirror they were fetched from and how they were built."""

    mirror: str
    settings: BuildSettings
    plain: Build
    patched: Build
    patch: dict[str, str]
    plain_updates: list[BuildProgress] = field(default_factory=list)

    def build(self, data: dict[str, Any], **kwargs: Any) -> Build:
        """``ensure_build`` of ``data`` (a spec, named "test" unless it says) in the session's
        cache, with these settings."""
        spec = spec_parse({"name": "test", **data})
        return ensure_build(spec, cache_dir=build_cache(), settings=self.settings, **kwargs)


@contextmanager
def pg15_release_builds() -> Iterator[ReleaseBuilds]:
    """Build (or, later in the session, reuse) the plain and the patched 15.18 release, served
    from a local mirror for as long as the context lasts."""
    tarball = installs.pg15_source_tarball()
    mirror_root = Path(tempfile.mkdtemp(prefix="benchhub-mirror-"))
    release_mirror(mirror_root, tarball)
    try:
        with http_server(mirror_root) as url:
            settings = BuildSettings(release_url=f"{url}/pub/source", ccache_dir=ccache_dir())
            updates: list[BuildProgress] = []
            spec = spec_parse({"name": "test", **release_spec()})
            plain = ensure_build(spec, cache_dir=build_cache(), settings=settings,
                                 progress=updates.append)  # fmt: skip
            patch = slow_commit(tarball)
            patched_spec = spec_parse({"name": "test", **release_spec(patches=[patch])})
            patched = ensure_build(patched_spec, cache_dir=build_cache(), settings=settings)
            builds = ReleaseBuilds(f"{url}/pub/source", settings, plain, patched, patch, updates)
            try:
                yield builds
            finally:
                plain.close()
                patched.close()
    finally:
        shutil.rmtree(mirror_root, ignore_errors=True)
