"""PostgreSQL version names for the server: the agent package's one definition, re-exported.

The grammar, the major and the order live in `benchhub_runner.servers.versions`, which the agent
uses to match installations too; see its docstring.
"""

from benchhub_runner.servers.versions import (
    MASTER_MAJOR,
    PATCH_MARK,
    STAGES,
    Version,
    VersionError,
    version_major,
    version_matches,
    version_parse,
)

__all__ = [
    "MASTER_MAJOR",
    "PATCH_MARK",
    "STAGES",
    "Version",
    "VersionError",
    "version_major",
    "version_matches",
    "version_parse",
]
