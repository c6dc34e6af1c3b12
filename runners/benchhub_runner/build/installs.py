"""The install cache: one PostgreSQL installation per resolved input, reused, bounded on disk.

Layout under ``<cache_dir>/builds/``::

    build.lock                 one build at a time per host (flock, exclusive)
    installs/<key>/            the installation prefix (bin/, lib/, share/, include/)
    installs/<key>/provenance.json, build.log
    installs/<key>/.benchhub-complete   written last: without it the entry is never used
    installs/<key>/.benchhub-used       its mtime is the entry's last use (for eviction)
    installs/.<key>.lock       held shared by everyone using the entry; eviction needs it
                               exclusive, so an install in use is never removed
    logs/                      logs of builds that failed or are running
    work/src/                  the one build tree (a fixed path, so ccache hits across builds)
    ccache/                    CCACHE_DIR unless the settings name another

flock rather than lock files or pids: the kernel releases a lock when its holder dies, so a
killed agent never leaves the cache locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import BuildStopped

log = logging.getLogger(__name__)

MARKER = ".benchhub-complete"
USED = ".benchhub-used"
KEPT_LOGS = 20


def install_key(inputs: dict[str, Any]) -> str:
    """The key of an installation: a digest of everything that changes what gets built."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class Hold:
    """A shared lock on one install: while open, eviction leaves that install alone."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle: IO[str] | None = handle

    def close(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


class InstallCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.installs = root / "installs"
        self.logs = root / "logs"
        self.work = root / "work"
        for path in (root, self.installs, self.logs):
            path.mkdir(parents=True, exist_ok=True)
            # The runner account must traverse these to reach installs and the build tree.
            path.chmod(0o755)

    def entry(self, key: str) -> Path:
        return self.installs / key

    def is_complete(self, key: str) -> bool:
        return (self.entry(key) / MARKER).is_file()

    def hold(self, key: str) -> Hold:
        handle = open(self.installs / f".{key}.lock", "a")  # noqa: SIM115 - owned by the Hold
        fcntl.flock(handle, fcntl.LOCK_SH)
        return Hold(handle)

    def touch(self, key: str) -> None:
        with contextlib.suppress(OSError):
            (self.entry(key) / USED).touch()

    def new_log(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        return self.logs / f"build-{stamp}-{os.getpid()}-{threading.get_ident() % 10000}.log"

    def build_lock(
        self, *, stop: threading.Event, waiting: Callable[[], None]
    ) -> contextlib.AbstractContextManager[None]:
        """Exclusive for the whole host (see ``flock_waiting``)."""
        return flock_waiting(self.root / "build.lock", stop=stop, waiting=waiting)

    def discard_incomplete(self) -> None:
        """Remove what killed builds left behind: prefixes without their marker. Only with the
        build lock held, when no build can be running."""
        for entry in self.installs.iterdir():
            if (
                entry.is_dir()
                and not entry.name.startswith(".")
                and not self.is_complete(entry.name)
            ):
                shutil.rmtree(entry, ignore_errors=True)

    def prune_logs(self) -> None:
        logs = sorted(self.logs.glob("build-*.log"), key=lambda p: p.stat().st_mtime)
        for old in logs[:-KEPT_LOGS]:
            old.unlink(missing_ok=True)

    # --- eviction ------------------------------------------------------------------------------

    def usage(self) -> dict[str, tuple[float, int]]:
        """{key: (last use as a timestamp, bytes on disk)} of every complete install."""
        found = {}
        for entry in self.installs.iterdir():
            if entry.name.startswith(".") or not (entry / MARKER).is_file():
                continue
            try:
                used = (entry / USED).stat().st_mtime
            except OSError:
                used = (entry / MARKER).stat().st_mtime
            found[entry.name] = (used, _disk_bytes(entry))
        return found

    def evict(self, *, max_bytes: int) -> list[str]:
        """Remove least recently used installs until the total fits ``max_bytes``; installs
        someone holds are skipped. Returns the keys removed, oldest first."""
        usage = self.usage()
        total = sum(size for _, size in usage.values())
        removed: list[str] = []
        for key, (_, size) in sorted(usage.items(), key=lambda item: item[1][0]):
            if total <= max_bytes:
                break
            if self._remove_unless_held(key):
                removed.append(key)
                total -= size
        if total > max_bytes:
            log.warning(
                "build cache holds %d MB, over its %d MB limit, all of it in use",
                total // 2**20,
                max_bytes // 2**20,
            )
        return removed

    def _remove_unless_held(self, key: str) -> bool:
        with open(self.installs / f".{key}.lock", "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            # The marker goes first: a reader that sees the entry from now on sees it incomplete.
            (self.entry(key) / MARKER).unlink(missing_ok=True)
            shutil.rmtree(self.entry(key), ignore_errors=True)
            fcntl.flock(handle, fcntl.LOCK_UN)
        return True


@contextlib.contextmanager
def flock_waiting(
    path: Path, *, stop: threading.Event, waiting: Callable[[], None]
) -> Iterator[None]:
    """An exclusive flock on ``path``. Polls, so a stop request is honoured while another
    process holds it (BuildStopped); ``waiting()`` is called about once a second meanwhile."""
    with open(path, "a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waiting()
                if stop.wait(1.0):
                    raise BuildStopped("wait") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _disk_bytes(path: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total
