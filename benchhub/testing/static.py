"""Collected static files for servers that tests and the bench run with DEBUG off.

Pages link static files by their hashed names from collectstatic's manifest
(CompressedManifestStaticFilesStorage), so rendering a page needs one. Collecting takes some
ten seconds (it compresses the admin's and Swagger UI's files too), so the output is kept in
var/cache/static/<digest>, where the digest covers every static file's name, size and mtime:
a session reuses it until a static file changes, and of sessions starting at once (pytest-xdist
workers) one collects, under a lock, while the others wait for its copy.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from django.conf import settings

CACHE = Path(__file__).resolve().parents[2] / "var" / "cache" / "static"


def static_sources_digest() -> str:
    """A digest of every file the static finders list: name, size and mtime."""
    from django.contrib.staticfiles import finders

    digest = hashlib.sha256()
    entries = []
    for finder in finders.get_finders():
        for path, storage in finder.list(None):
            stat = os.stat(storage.path(path))
            entries.append(
                f"{getattr(storage, 'prefix', '') or ''}/{path} {stat.st_size} {stat.st_mtime_ns}"
            )
    for entry in sorted(entries):
        digest.update(entry.encode() + b"\n")
    digest.update(settings.STORAGES["staticfiles"]["BACKEND"].encode())
    return digest.hexdigest()[:16]


def static_collected() -> Path:
    """A STATIC_ROOT holding collectstatic's output for the static files as they are now
    (collected on the first call after a change, then reused). Does not change settings."""
    from django.core.management import call_command
    from django.test import override_settings

    root = CACHE / static_sources_digest()
    if (root / "staticfiles.json").exists():
        return root
    CACHE.mkdir(parents=True, exist_ok=True)
    # One process collects while the others (pytest-xdist workers) wait for it: on a 2-core
    # machine four collecting at once take as long as four in a row.
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "staticfiles.json").exists():
            scratch = Path(tempfile.mkdtemp(prefix="collecting-", dir=CACHE))
            scratch.chmod(0o755)  # mkdtemp's 0700 would keep out a server run as another user
            with override_settings(STATIC_ROOT=str(scratch)):
                call_command("collectstatic", "--noinput", verbosity=0)
            scratch.rename(root)
            _prune(keep=root)
    return root


def _prune(*, keep: Path) -> None:
    """Remove the copies of earlier static files (tens of MB each) a day after they were made;
    a younger one may belong to a session still running on the files as they were."""
    day_ago = time.time() - 86400
    for other in CACHE.iterdir():
        if other.is_dir() and other != keep and other.stat().st_mtime < day_ago:
            shutil.rmtree(other, ignore_errors=True)
