"""The install cache on real directories: keys, completeness, holds and LRU eviction."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchhub_runner.build import BuildStopped
from benchhub_runner.build.installs import MARKER, USED, InstallCache, install_key

MB = 1024 * 1024


def fake_install(cache: InstallCache, key: str, *, mb: int, used_ago_s: float) -> Path:
    entry = cache.entry(key)
    (entry / "bin").mkdir(parents=True)
    (entry / "bin" / "postgres").write_bytes(os.urandom(mb * MB))
    (entry / USED).touch()
    (entry / MARKER).write_text(key)
    when = time.time() - used_ago_s
    os.utime(entry / USED, (when, when))
    return entry


@pytest.fixture
def cache(tmp_path: Path) -> InstallCache:
    return InstallCache(tmp_path / "builds")


def test_it_evicts_the_least_recently_used_first(cache: InstallCache) -> None:
    for key, ago in (("old", 300), ("mid", 200), ("new", 100)):
        fake_install(cache, key, mb=1, used_ago_s=ago)
    assert cache.evict(max_bytes=int(2.5 * MB)) == ["old"]
    assert sorted(p.name for p in cache.installs.iterdir() if not p.name.startswith(".")) == [
        "mid",
        "new",
    ]
    # A use makes an install recent again.
    cache.touch("mid")
    assert cache.evict(max_bytes=int(1.5 * MB)) == ["new"]
    assert cache.is_complete("mid")


def test_it_never_evicts_an_install_in_use(cache: InstallCache) -> None:
    for key, ago in (("old", 300), ("mid", 200), ("new", 100)):
        fake_install(cache, key, mb=1, used_ago_s=ago)
    held = cache.hold("old")
    # Held from another process too: flock holds across processes, as agents of one host need.
    child = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a'); "
         "fcntl.flock(f, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)",
         str(cache.installs / ".mid.lock")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        assert cache.evict(max_bytes=MB // 2) == ["new"]
        assert cache.is_complete("old") and cache.is_complete("mid")
    finally:
        child.kill()
        child.wait()
        held.close()
    assert cache.evict(max_bytes=MB // 2) == ["old", "mid"]


def test_it_ignores_and_discards_unfinished_installs(cache: InstallCache) -> None:
    entry = fake_install(cache, "half", mb=1, used_ago_s=10)
    (entry / MARKER).unlink()
    assert not cache.is_complete("half")
    assert cache.usage() == {}
    kept = fake_install(cache, "whole", mb=1, used_ago_s=10)
    cache.discard_incomplete()
    assert not entry.exists()
    assert kept.exists()


def test_it_keys_installs_by_everything_that_changes_the_build() -> None:
    base = {"source": "tarball:ab", "patches": ["p1", "p2"], "compiler": "gcc 12.2.0"}
    assert install_key(base) == install_key(dict(reversed(base.items())))
    assert install_key(base) != install_key({**base, "patches": ["p2", "p1"]})
    assert install_key(base) != install_key({**base, "compiler": "gcc 14.1.0"})


def test_it_waits_for_the_host_build_lock_until_stopped(cache: InstallCache) -> None:
    stop = threading.Event()
    waits: list[float] = []
    with cache.build_lock(stop=stop, waiting=lambda: None):
        # A second build of this host waits for the first, and gives up when told to stop.
        def second() -> None:
            with cache.build_lock(stop=stop, waiting=lambda: waits.append(time.monotonic())):
                pass

        errors: list[BaseException] = []
        thread = threading.Thread(target=lambda: _catch(second, errors))
        thread.start()
        time.sleep(1.5)
        stop.set()
        thread.join(timeout=5)
    assert waits, "the second build should have waited"
    assert len(errors) == 1 and isinstance(errors[0], BuildStopped)


def _catch(fn: object, errors: list[BaseException]) -> None:
    try:
        fn()  # type: ignore[operator]
    except BuildStopped as exc:
        errors.append(exc)
