"""Building PostgreSQL from source on the agent host: any release, tarball or git commit, with
patches, configure flags, CFLAGS and contrib modules, cached per resolved input.

- ``spec``: the build spec a job sends (``spec_parse``, ``spec_from_json``; ``SpecError``)
- ``builder``: ``ensure_build`` and the ``Build`` it returns (installation + provenance)
- ``sources``: the source cache (git mirrors, tarballs by sha256, release names) and a
  bisection's range of commits (``commit_range``)
- ``installs``: the install cache (keys, holds, the host's build lock, LRU eviction)
- ``compile``: unpack, patch, configure, make, install, run unprivileged through ``steps``
- ``majors``: per-major defaults for compiling old releases with a modern gcc
- ``settings``: the ``[build]`` table of the agent's configuration

Stdlib only, like the rest of the agent. docs/agent.md, "Building PostgreSQL from source".
"""

from .builder import Build, commit_range, ensure_build, resolve_source
from .errors import STAGES, BuildError, BuildStopped
from .settings import BuildSettings, build_settings_from
from .sources import CommitRange, RangeCommit
from .spec import BuildSpec, SpecError, git_ref_parse, spec_from_json, spec_parse
from .steps import BuildProgress, ProgressCallback
from .tarballs import ResolvedSource

__all__ = [
    "STAGES",
    "Build",
    "BuildError",
    "BuildProgress",
    "BuildSettings",
    "BuildSpec",
    "BuildStopped",
    "CommitRange",
    "ProgressCallback",
    "RangeCommit",
    "ResolvedSource",
    "SpecError",
    "build_settings_from",
    "commit_range",
    "ensure_build",
    "git_ref_parse",
    "resolve_source",
    "spec_from_json",
    "spec_parse",
]
