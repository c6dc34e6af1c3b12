"""Files in a job's directories, as the root agent touches them: never through a link.

Everything under a job's directory belongs to the job's account, which may replace any file
or directory there with a symbolic link (to the agent's configuration, to another cluster's
data directory) at any moment. So the agent opens each path component from its trusted parent
with O_NOFOLLOW (directories with O_DIRECTORY too), by file descriptor, and acts on what it
opened: a link anywhere on the way fails the call with ELOOP or ENOTDIR, never reaches its
target. Only the part of a path up to its job's directory (`trusted`, which the job cannot
replace: its parent is the agent's) is resolved as usual.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def open_dir(path: Path, *, trusted: Path) -> Iterator[int]:
    """A descriptor of directory `path`, each component below `trusted` opened without
    following a link; raises OSError (ELOOP, ENOTDIR) on a link there."""
    path, trusted = Path(path).absolute(), Path(trusted).absolute()
    if not path.is_relative_to(trusted):
        raise OSError(f"{path} is not under {trusted}")
    fd = os.open(os.path.realpath(trusted), _DIR & ~os.O_NOFOLLOW)
    try:
        for part in path.relative_to(trusted).parts:
            child = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def read_tail(
    path: Path, *, trusted: Path, owner: int | None = None, since: int = 0, limit: int = 16384
) -> bytes:
    """At most the last `limit` bytes of regular file `path` after offset `since`, opened
    without following links; OSError when it is a link, on the way or at the end, not a
    regular file (a FIFO would block) or, with `owner`, not that user's (a hard link to a file
    of the agent's is no link to refuse, but is not the job account's own)."""
    with open_dir(path.parent, trusted=trusted) as parent:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if owner is not None and info.st_uid != owner:
            raise OSError(f"{path} is not the job account's own file")
        handle.seek(max(since, info.st_size - limit))
        return handle.read(limit)


def append(path: Path, text: str, *, trusted: Path) -> None:
    """Append `text` to regular file `path`, opened without following links."""
    with open_dir(path.parent, trusted=trusted) as parent:
        fd = os.open(path.name, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW, dir_fd=parent)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        if not _regular(fd):
            raise OSError(f"{path} is not a regular file")
        handle.write(text)


def unlink(path: Path, *, trusted: Path) -> bool:
    """Remove the entry `path` (a link itself, never its target) if its directory is reached
    without a link; whether something was removed."""
    try:
        with open_dir(path.parent, trusted=trusted) as parent:
            os.unlink(path.name, dir_fd=parent)
    except OSError:
        return False
    return True


def identity(path: Path, *, trusted: Path) -> tuple[int, int] | None:
    """(device, inode) of directory `path` reached without links, or None."""
    try:
        with open_dir(path, trusted=trusted) as fd:
            info = os.fstat(fd)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def open_file(path: Path, *, trusted: Path) -> BinaryIO:
    """Regular file `path` open for reading, reached without links."""
    with open_dir(path.parent, trusted=trusted) as parent:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    handle = os.fdopen(fd, "rb")
    if not _regular(fd):
        handle.close()
        raise OSError(f"{path} is not a regular file")
    return handle


def list_files(directory: Path, *, trusted: Path) -> list[Path]:
    """The regular files (not links) of `directory`, reached without links, sorted."""
    with open_dir(directory, trusted=trusted) as fd:
        names = os.listdir(fd)
        found = []
        for name in names:
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    found.append(directory / name)
    return sorted(found)
