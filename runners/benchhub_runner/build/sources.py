"""The source cache: one git mirror per repository, tarballs by sha256, release names resolved.

Layout under ``<cache_dir>/builds/sources/``::

    git/<sha256(url)[:16]>.git     git clone --mirror, then git fetch --prune
    tarballs/<sha256>              verified tarballs (tar detects the compression)
    releases/<name>.sha256         the published digest of a release once it was fetched

Resolution turns a spec's source into the exact input of a build: a commit sha with its commit
date, or a tarball's sha256. A commit or a tag the mirror already has, and a release or tarball
already in the cache, resolve without the network; a branch (or a branch and a date) always
fetches first, since the branch moves.

git runs as the agent (it only reads and writes this cache, never the source's own scripts),
restricted to the https, http, git and file transports and with no terminal prompts. A git url
that names this host (a path, or file://) is taken only when the repository lies under
``[build] source_dirs``, as a tarball ``path`` is (``SourceCache._location``, ``_repository``).
A network url (a tarball's, a repository's) is fetched from a public address only, unless the
host owner allows private ones (``[build] allow_private_sources``;
benchhub_runner.transport.urlpolicy): its name is resolved once, checked, and the fetch connects to
the address checked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import urllib.error
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..transport.urlpolicy import AddressRefused, address_resolve
from .installs import flock_waiting
from .spec import GitSource, ReleaseSource, Source, TarballSource
from .steps import Steps
from .tarballs import OPT_IN, ResolvedSource, TarballCache

_HEX = re.compile(r"^[0-9a-f]{7,40}\Z")
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": "https:http:git:file"}
# A bisection's range: at most this many commits (the server refuses more, benchhub.bisections),
# and a commit's changed files listed up to this many (a tree-wide change lists thousands).
RANGE_LIMIT = 5000
RANGE_FILES = 100
_RECORD, _FIELD = "\x1e", "\x1f"
_NETWORK_URL = re.compile(r"^(https?|git)://", re.IGNORECASE)
# upload-pack serves exactly the directory it is given: without --strict it would try
# "<dir>/.git" first, a link the check below did not follow.
# Over git:// the option is the service name the daemon is asked for, so it is given for a
# local repository only.
_UPLOAD_PACK = "--upload-pack=git-upload-pack --strict"
_DEFAULT_PORTS = {"http": 80, "https": 443, "git": 9418}


@dataclass(frozen=True)
class _Remote:
    """What git is given to clone or fetch from: `where` (a pinned url or a checked git
    directory), `options` before the command (``-c`` ...), `arguments` after it."""

    where: str
    options: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class RangeCommit:
    """A commit of a range, as a bisection page shows it."""

    sha: str
    parents: tuple[str, ...]
    author: str
    date: str
    subject: str
    files: tuple[str, ...]
    files_total: int

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "parents": list(self.parents), "files": list(self.files)}


@dataclass(frozen=True)
class CommitRange:
    """A bisection's range: the two ends resolved to full shas, and ``commits`` (newest first,
    the bad end first) as ``git rev-list bad ^good`` lists them."""

    good: str
    bad: str
    commits: list[RangeCommit]


class SourceCache(TarballCache):
    """The source cache (see the module's docstring): tarballs and releases (TarballCache) and
    one git mirror per repository."""

    def resolve(self, source: Source, steps: Steps) -> ResolvedSource:
        """The exact input of ``source``, fetching what is missing. Agents of one host share
        the cache, so one resolves at a time (two clones of one mirror would collide)."""

        def waiting() -> None:
            steps.report("wait", "waiting for another agent's fetch")

        with flock_waiting(self.root / ".lock", stop=steps.stop, waiting=waiting):
            return self._resolve(source, steps)

    def _resolve(self, source: Source, steps: Steps) -> ResolvedSource:
        if isinstance(source, ReleaseSource):
            return self._release(source, steps)
        if isinstance(source, TarballSource):
            path = self._tarball(source, steps)
            where = source.url or source.path
            return ResolvedSource("tarball", f"tarball:{source.sha256}", path, source.sha256, where)
        return self._git(source, steps)

    # --- git -----------------------------------------------------------------------------------

    def commit_range(self, url: str, good: str, bad: str, steps: Steps) -> CommitRange:
        """What ``git rev-list bad ^good`` lists, newest first in topological order (merged
        branches included, as ``git bisect`` searches them), with parents, author, commit
        date (UTC), subject and changed files. Fetches when a ref is not a fixed commit."""

        def waiting() -> None:
            steps.report("wait", "waiting for another agent's fetch")

        with flock_waiting(self.root / ".lock", stop=steps.stop, waiting=waiting):
            good_sha = self._git(GitSource(url=url, ref=good), steps).commit
            bad_sha = self._git(GitSource(url=url, ref=bad), steps).commit
            assert good_sha is not None and bad_sha is not None
            commits = self._range(self.mirror_path(url), good_sha, bad_sha, steps)
        return CommitRange(good=good_sha, bad=bad_sha, commits=commits)

    def _range(self, mirror: Path, good: str, bad: str, steps: Steps) -> list[RangeCommit]:
        git_dir = ["git", "--git-dir", str(mirror)]
        count = int(steps.capture(
            [*git_dir, "rev-list", "--count", bad, f"^{good}", "--"],
            stage="resolve", cwd=self.root, privileged=True,
        ).strip())  # fmt: skip
        if count == 0:
            raise steps.fail(
                "resolve",
                f"{bad[:12]} has no commit that {good[:12]} lacks: the good end must be an "
                "ancestor of the bad end, or older",
            )
        if count > RANGE_LIMIT:
            raise steps.fail("resolve", f"the range has {count} commits, more than {RANGE_LIMIT}")
        fields = _FIELD.join(["%H", "%P", "%an <%ae>", "%cI", "%s"])
        out = steps.capture(
            [*git_dir, "log", "--topo-order", "--no-renames", "--name-only",
             f"--format={_RECORD}{fields}", bad, f"^{good}", "--"],
            stage="resolve", cwd=self.root, privileged=True,
        )  # fmt: skip
        return [_range_commit(record) for record in out.split(_RECORD)[1:]]

    def changes(self, url: str, old: str, new: str, steps: Steps) -> tuple[list[str], list[str]]:
        """The files that differ between two commits of the mirror of ``url``: (added or
        changed, removed), as paths from the top of the tree. BuildError at unpack when git
        cannot tell (a commit the mirror lost)."""
        out = steps.capture(
            ["git", "--git-dir", str(self.mirror_path(url)), "diff", "--name-status", "-z",
             "--no-renames", old, new, "--"],
            stage="unpack", cwd=self.root, privileged=True,
        )  # fmt: skip
        fields = out.split("\0")
        changed: list[str] = []
        deleted: list[str] = []
        for status, path in zip(fields[0::2], fields[1::2], strict=False):
            if status and path:
                (deleted if status.startswith("D") else changed).append(path)
        return changed, deleted

    def has_commits(self, url: str, commits: list[str], steps: Steps) -> bool:
        """Whether the mirror of ``url`` holds every one of ``commits`` (full ids)."""
        mirror = self.mirror_path(url)
        return mirror.is_dir() and all(self._rev(mirror, c, steps) == c for c in commits)

    def mirror_path(self, url: str) -> Path:
        return self.root / "git" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".git")

    def _git(self, source: GitSource, steps: Steps) -> ResolvedSource:
        # Checked on every use, before git touches the url: a mirror made while the host listed
        # the directory is not used once it no longer does.
        location = self._location(source.url, steps)
        mirror = self.mirror_path(source.url)
        fresh = self._mirror(source.url, location, mirror, steps)
        if source.ref is not None:
            commit = None if fresh else self._fixed_rev(mirror, source.ref, steps)
            if commit is None:
                if not fresh:
                    self._fetch(mirror, source.url, location, steps)
                commit = self._rev(mirror, source.ref, steps)
            if commit is None:
                raise steps.fail("resolve", f"{source.ref!r} is not a commit, tag or branch of "
                                 f"{source.url}")  # fmt: skip
            ref = source.ref
        else:
            assert source.branch is not None and source.date is not None
            if not fresh:
                self._fetch(mirror, source.url, location, steps)
            commit = self._at_date(mirror, source.branch, source.date, steps)
            ref = f"{source.branch}@{source.date.isoformat()}"
        info = steps.capture(
            ["git", "--git-dir", str(mirror), "show", "-s", "--format=%H%n%cI%n%s", commit],
            stage="resolve",
            cwd=self.root,
            privileged=True,
        ).split("\n")
        return ResolvedSource(
            "git",
            f"commit:{info[0]}",
            repository=source.url,
            ref=ref,
            commit=info[0],
            commit_date=_utc(info[1]),
            subject=info[2][:200],
        )

    def _location(self, url: str, steps: Steps) -> str | Path:
        """A network url as it is; for a url naming this host (a path or file://), the path
        with its links resolved, when that is under one of `source_dirs`. The agent's git runs
        as root, so without this whoever writes a recipe could have any repository of the host
        cloned and built. Failures name the url and the setting, never anything read from the
        path. A path that is gone passes: a mirror already holding a commit still serves it."""
        if _NETWORK_URL.match(url):
            return url
        path = url[len("file://") :] if url.lower().startswith("file://") else url
        if not path.startswith("/") or "%" in path:
            # Relative (read from the agent's directory) or escaped (git decodes it): neither
            # is a path this check could read as git does, so it is not under a listed one.
            raise self._not_listed(field="source.url", given=url, steps=steps)
        return self._allowed(path, field="source.url", given=url, steps=steps)

    def _repository(self, url: str, location: str | Path, steps: Steps) -> _Remote:
        """What git is given to clone or fetch ``url`` from (``location`` as `_location` made
        it), and the ``-c`` options to give it: a network url pinned to its checked address
        (`_pinned`); for a path, the git directory it is (or its .git, when that is a
        directory) with links resolved, when that and its objects are under `source_dirs` and
        it borrows no objects from elsewhere. Git would otherwise pick a directory of its own
        from the path (``<path>/.git``, ``<path>.git``), unchecked."""
        if isinstance(location, str):
            return self._pinned(url, steps)
        git_dir = location
        if os.path.lexists(location / ".git"):
            if not (location / ".git").is_dir():
                raise steps.fail(
                    "fetch",
                    f"source.url {url} is a working tree whose .git is a file (a linked "
                    "worktree or submodule): give the repository's own directory",
                )
            git_dir = self._allowed(
                str(location / ".git"), field="source.url", given=url, steps=steps
            )
        bare = (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir()
        if not bare or os.path.lexists(git_dir / ".git"):
            raise steps.fail("fetch", f"source.url {url} is not a git repository")
        self._allowed(str(git_dir / "objects"), field="source.url", given=url, steps=steps)
        if os.path.lexists(git_dir / "objects" / "info" / "alternates"):
            # upload-pack serves a repository's borrowed objects too, from wherever it
            # borrows them; the file is not read here, so the repository is refused.
            raise steps.fail(
                "fetch",
                f"source.url {url} borrows objects from another repository "
                "(objects/info/alternates), which this agent does not clone: repack it "
                "(git repack -a -d) and remove that file",
            )
        return _Remote(str(git_dir), arguments=(_UPLOAD_PACK,))

    def _pinned(self, url: str, steps: Steps) -> _Remote:
        """A network url resolved once and checked (urlpolicy), then pinned to that address:
        a git:// url names the address itself; for http(s) curl is handed the address for the
        name (which stays, for TLS) and follows no redirect, since it would resolve another
        name itself, unchecked."""
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        try:
            port = parts.port or _DEFAULT_PORTS[scheme]
        except (ValueError, KeyError):
            raise steps.fail("fetch", f"source.url {url} has no usable port") from None
        host = parts.hostname or ""
        try:
            address = address_resolve(host, port, allow_private=self.allow_private, opt_in=OPT_IN)
        except (LookupError, AddressRefused) as exc:
            raise steps.fail("fetch", f"source.url {url}: {exc}") from exc
        shown = f"[{address}]" if ":" in address else address
        if scheme == "git":
            return _Remote(urllib.parse.urlunsplit(parts._replace(netloc=f"{shown}:{port}")))
        return _Remote(url, options=("-c", f"http.curloptResolve={host}:{port}:{shown}",
                                     "-c", "http.followRedirects=false"))  # fmt: skip

    def _mirror(self, url: str, location: str | Path, mirror: Path, steps: Steps) -> bool:
        """Make the mirror of ``url`` (at ``location``, as `_location` made it) if it is
        missing; True when it was just cloned (so it is current)."""
        if (mirror / "HEAD").is_file():
            return False
        remote = self._repository(url, location, steps)
        staging = mirror.with_name(mirror.name + f".{os.getpid()}.part")
        shutil.rmtree(staging, ignore_errors=True)
        steps.note("fetch", f"cloning {url}")
        try:
            # --no-local: a local repository is read through the pack protocol, as a remote
            # one is, so its object files are neither hardlinked nor copied as they lie (a
            # link among them to a file elsewhere would be copied into the cache by root).
            steps.run(
                [
                    "git",
                    *remote.options,
                    "clone",
                    "--mirror",
                    "--no-local",
                    *remote.arguments,
                    "--",
                    remote.where,
                    str(staging),
                ],
                stage="fetch",
                cwd=self.root,
                privileged=True,
            )
            os.replace(staging, mirror)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return True

    def _fetch(self, mirror: Path, url: str, location: str | Path, steps: Steps) -> None:
        """Fetch into ``mirror`` from what `_repository` checks now (not the origin the mirror
        recorded when it was cloned), with a mirror's refspec."""
        remote = self._repository(url, location, steps)
        steps.note("fetch", "fetching new commits")
        steps.run(
            ["git", *remote.options, "--git-dir", str(mirror), "fetch", "--prune",
             *remote.arguments, "--", remote.where, "+refs/*:refs/*"],
            stage="fetch", cwd=self.root, privileged=True,
        )  # fmt: skip

    def _fixed_rev(self, mirror: Path, ref: str, steps: Steps) -> str | None:
        """The commit of ``ref`` when it cannot have moved: a commit id or a tag the mirror
        has. None for a branch (it moves) or anything the mirror lacks: fetch first."""
        if _HEX.match(ref):
            return self._rev(mirror, ref, steps)
        if self._rev(mirror, f"refs/tags/{ref}", steps) is not None:
            return self._rev(mirror, f"refs/tags/{ref}", steps)
        return None

    def _rev(self, mirror: Path, ref: str, steps: Steps) -> str | None:
        out = steps.capture(
            ["git", "--git-dir", str(mirror), "rev-parse", "--verify", "--quiet",
             "--end-of-options", f"{ref}^{{commit}}"],
            stage="resolve", cwd=self.root, privileged=True, check=False,
        )  # fmt: skip
        return out.strip() or None

    def _at_date(self, mirror: Path, branch: str, day: dt.date, steps: Steps) -> str:
        if self._rev(mirror, f"refs/heads/{branch}", steps) is None:
            raise steps.fail("resolve", f"the repository has no branch {branch!r}")
        # The end of that day in UTC; first-parent keeps to the branch's own line of commits.
        until = f"{day.isoformat()} 23:59:59 +0000"
        out = steps.capture(
            ["git", "--git-dir", str(mirror), "rev-list", "-1", "--first-parent",
             f"--until={until}", f"refs/heads/{branch}", "--"],
            stage="resolve", cwd=self.root, privileged=True,
        )  # fmt: skip
        if not out.strip():
            raise steps.fail("resolve", f"branch {branch!r} has no commit on or before {day}")
        return out.strip()


def _range_commit(record: str) -> RangeCommit:
    head, _, names = record.partition("\n")
    sha, parents, author, date, subject = head.split(_FIELD, 4)
    files = [name for name in names.split("\n") if name]
    return RangeCommit(
        sha=sha,
        parents=tuple(parents.split()),
        author=author[:200],
        date=_utc(date),
        subject=subject[:200],
        files=tuple(name[:300] for name in files[:RANGE_FILES]),
        files_total=len(files),
    )


def _utc(iso: str) -> str:
    return dt.datetime.fromisoformat(iso).astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
