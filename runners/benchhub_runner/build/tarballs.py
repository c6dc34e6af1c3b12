"""The source cache's tarballs and releases: a tarball by its sha256 (downloaded from a url the
address policy allows, or copied from a file under ``[build] source_dirs`` as the build's
unprivileged user), and a release name resolved to its tarball through the published digest.
Layout and policy: sources.py, whose SourceCache adds the git mirrors."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import urllib.error
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sandbox.account import Account, runner_account
from ..servers.installation import ProvisionError
from ..servers.prebuilt import open_url
from ..transport.urlpolicy import pinned_open
from .errors import BuildError
from .spec import ReleaseSource, TarballSource
from .steps import Steps

DOWNLOAD_TIMEOUT_S = 60
_CHUNK = 1 << 20
_SHA256_TOKEN = re.compile(r"\b([0-9a-fA-F]{64})\b")
OPT_IN = "[build] allow_private_sources"


@dataclass(frozen=True)
class ResolvedSource:
    """The exact input of a build. ``digest`` ("commit:<sha>" or "tarball:<sha256>") is what
    the install key uses; the rest is provenance."""

    kind: str
    digest: str
    tarball: Path | None = None
    tarball_sha256: str | None = None
    location: str | None = None
    release: str | None = None
    repository: str | None = None
    ref: str | None = None
    commit: str | None = None
    commit_date: str | None = None
    subject: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k not in ("tarball", "digest")}
        return {k: v for k, v in data.items() if v is not None}


class TarballCache:
    """`source_dirs`: the only directories a tarball source's `path` may name a file under, and
    a git source's local url (a path or file://) a repository under (the host owner's list,
    [build] source_dirs). `allow_private`: a source's network url may name a private address
    ([build] allow_private_sources); the release mirror (`release_url`) is the owner's own."""

    def __init__(
        self,
        root: Path,
        *,
        release_url: str,
        source_dirs: tuple[Path, ...] = (),
        allow_private: bool = False,
    ) -> None:
        self.root = root
        self.release_url = release_url.rstrip("/")
        self.source_dirs = source_dirs
        self.allow_private = allow_private
        for sub in ("git", "tarballs", "releases", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)

    # --- tarballs ------------------------------------------------------------------------------

    def tarball_path(self, sha256: str) -> Path:
        return self.root / "tarballs" / sha256

    def _tarball(self, source: TarballSource, steps: Steps, *, owners: bool = False) -> Path:
        """The cached tarball of `source`, fetched or copied when missing. `owners`: the url is
        the host owner's release mirror, not checked against the address policy."""
        cached = self.tarball_path(source.sha256)
        if cached.is_file():
            return cached
        if source.url is not None:
            steps.note("fetch", f"downloading {source.url}")
            self._download(source.url, sha256=source.sha256, steps=steps, owners=owners)
        else:
            assert source.path is not None
            path = self._allowed(source.path, field="source.path", given=source.path, steps=steps)
            steps.note("fetch", f"copying {source.path}")
            self._copy(path, sha256=source.sha256, steps=steps)
        return cached

    def _allowed(self, path: str, *, field: str, given: str, steps: Steps) -> Path:
        """`path` with its links resolved, when that is under one of `source_dirs`; the
        failure names `field` and the value the job gave (`given`), never anything read from
        the path."""
        real = Path(os.path.realpath(path))
        for allowed in self.source_dirs:
            root = Path(os.path.realpath(allowed))
            if real == root or root in real.parents:
                return real
        raise self._not_listed(field=field, given=given, steps=steps)

    def _not_listed(self, *, field: str, given: str, steps: Steps) -> BuildError:
        listed = ", ".join(str(d) for d in self.source_dirs) or "none"
        return steps.fail(
            "fetch",
            f"{field} {given} is not under a directory this agent takes sources from "
            f"([build] source_dirs in its configuration: {listed})",
        )

    def _download(self, url: str, *, sha256: str, steps: Steps, owners: bool) -> None:
        staging = self._staging(sha256)
        digest = hashlib.sha256()
        try:
            with (
                self._open(url, owners=owners) as response,
                open_private(staging) as out,
            ):
                while chunk := response.read(_CHUNK):
                    steps.check_stop("fetch")
                    digest.update(chunk)
                    out.write(chunk)
        except urllib.error.HTTPError as exc:
            staging.unlink(missing_ok=True)
            raise steps.fail(
                "fetch", f"download of {url} failed: HTTP {exc.code} {exc.reason}"
            ) from exc
        except urllib.error.URLError as exc:
            staging.unlink(missing_ok=True)
            raise steps.fail("fetch", f"download of {url} failed: {exc.reason}") from exc
        except (ProvisionError, OSError) as exc:
            staging.unlink(missing_ok=True)
            raise steps.fail("fetch", str(exc)) from exc
        self._publish(staging, digest.hexdigest(), sha256=sha256, what=url, steps=steps)

    def _open(self, url: str, *, owners: bool) -> Any:
        if owners:
            return open_url(url, timeout=DOWNLOAD_TIMEOUT_S)
        return pinned_open(
            url,
            timeout=DOWNLOAD_TIMEOUT_S,
            allow_private=self.allow_private,
            opt_in=OPT_IN,
            headers={"User-Agent": "benchhub-runner"},
        )

    def _copy(self, path: Path, *, sha256: str, steps: Steps) -> None:
        """Copy the file as the build's unprivileged user (cat run as it), never as root: a
        file that user may not read is not copied, whatever the agent could read."""
        staging = self._staging(sha256)
        digest = hashlib.sha256()
        account = build_user()
        try:
            with open_private(staging) as out:
                reader = subprocess.Popen(
                    ["cat", "--", str(path)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                    **(account.popen_kwargs() if account is not None else {}),
                )
                assert reader.stdout is not None
                while chunk := reader.stdout.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                failed = reader.wait() != 0
        except OSError as exc:
            staging.unlink(missing_ok=True)
            raise steps.fail("fetch", f"cannot read {path}: {exc.strerror or exc}") from exc
        if failed:
            staging.unlink(missing_ok=True)
            who = f"user {account.name}" if account is not None else "the agent"
            raise steps.fail("fetch", f"cannot read {path} as {who}")
        if digest.hexdigest() != sha256:
            # The file is the host's, not the job's: say that it differs, not what it holds.
            staging.unlink(missing_ok=True)
            raise steps.fail("fetch", f"{path} does not have the sha256 the source gives")
        self._publish(staging, sha256, sha256=sha256, what=str(path), steps=steps)

    def _staging(self, sha256: str) -> Path:
        return self.root / "tmp" / f"{sha256}.{os.getpid()}.part"

    def _publish(self, staging: Path, got: str, *, sha256: str, what: str, steps: Steps) -> None:
        if got != sha256:
            staging.unlink(missing_ok=True)
            raise steps.fail("fetch", f"sha256 of {what} is {got}, expected {sha256}")
        # Owner-only; the build's unprivileged user owns it, as it unpacks it.
        staging.chmod(0o600)
        if (account := build_user()) is not None:
            os.chown(staging, account.uid, account.gid)
        os.replace(staging, self.tarball_path(sha256))

    # --- releases ------------------------------------------------------------------------------

    def _release(self, source: ReleaseSource, steps: Steps) -> ResolvedSource:
        name = source.version
        url = f"{self.release_url}/v{name}/postgresql-{name}.tar.bz2"
        known = self.root / "releases" / f"{name}.sha256"
        sha = known.read_text().strip() if known.is_file() else ""
        if not sha or not self.tarball_path(sha).is_file():
            sha = self._published_sha256(url, steps)
            self._tarball(TarballSource(sha256=sha, url=url), steps, owners=True)
            known.write_text(sha + "\n")
        return ResolvedSource(
            "release", f"tarball:{sha}", self.tarball_path(sha), sha, url, release=name
        )

    def _published_sha256(self, url: str, steps: Steps) -> str:
        steps.note("resolve", f"reading {url}.sha256")
        try:
            with open_url(url + ".sha256", timeout=DOWNLOAD_TIMEOUT_S) as response:
                text = response.read(4096).decode("ascii", errors="replace")
        except (ProvisionError, OSError) as exc:
            raise steps.fail(
                "resolve",
                f"cannot read the published sha256 of this release: {exc} (a release the "
                "mirror does not have, or one without a .sha256: use a tarball source with its "
                "sha256 instead)",
            ) from exc
        match = _SHA256_TOKEN.search(text)
        if not match:
            raise steps.fail("resolve", f"{url}.sha256 holds no sha256: {text[:200]!r}")
        return match.group(1).lower()


def open_private(path: Path) -> Any:
    """A new file only its owner may read, open for writing."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")


def build_user() -> Account | None:
    """The unprivileged user builds run as (None: the agent is not root and builds as itself)."""
    return runner_account()
