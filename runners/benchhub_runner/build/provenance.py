"""The provenance of a build from source: its spec, the exact source, the patches, configure's
arguments, the compiler and ccache, and the server version it produced."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .spec import BuildSpec
from .stages import Compiled
from .tarballs import ResolvedSource
from .toolchain import Toolchain


def provenance_record(
    spec: BuildSpec,
    resolved: ResolvedSource,
    compiled: Compiled,
    toolchain: Toolchain,
    *,
    key: str,
    seconds: float,
) -> dict[str, Any]:
    """What a build from source was made of and how, as the run records it and the install
    keeps it beside itself (PROVENANCE); `seconds` the build took."""
    defaults = compiled.defaults
    return {
        "name": spec.name,
        "key": key,
        "version": compiled.version,
        "major": compiled.major,
        "postgres_version": compiled.postgres_version,
        "source": resolved.as_dict(),
        "patches": [{"name": p.name, "sha256": p.sha256} for p in spec.patches],
        "configure_flags": list(spec.configure_flags),
        "configure_args": compiled.configure_args,
        "build_mode": compiled.mode,
        "cflags": spec.cflags,
        "copt": " ".join(compiled.copt),
        "contrib": compiled.contrib,
        "major_defaults": None
        if defaults is None
        else {
            "major": defaults.major,
            "configure_flags": list(defaults.configure_flags),
            "copt": list(defaults.copt),
            "pgbench_dir": defaults.pgbench_dir,
            "verified": defaults.verified,
        },
        "compiler": {"cc": toolchain.cc, "version": toolchain.version},
        "ccache": {"used": toolchain.ccache is not None, **compiled.ccache},
        "jobs": toolchain.jobs,
        "pg_config": compiled.pg_config,
        "build_seconds": seconds,
        "built_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
