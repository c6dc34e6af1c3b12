"""What to build: a ``BuildSpec`` parsed once from the JSON a server (or a person) sends.

The format (docs/agent.md, "Building PostgreSQL from source")::

    {"name": "master+pgxact-split",
     "source": {"kind": "release", "version": "15.18"}
             | {"kind": "tarball", "url": "https://...", "sha256": "<64 hex>"}
             | {"kind": "tarball", "path": "/srv/pg.tar.bz2", "sha256": "<64 hex>"}
             | {"kind": "git", "url": "https://...", "ref": "<commit, tag or branch>"}
             | {"kind": "git", "url": "https://...", "branch": "master", "date": "2021-05-01"},
     "patches": [{"name": "pgxact-split.patch", "sha256": "<64 hex>", "text": "diff ..."}],
     "configure_flags": ["--enable-debug"],
     "cflags": "-O2 -fno-omit-frame-pointer",
     "contrib": ["pg_stat_statements"],
     "major_defaults": true}

Only ``name`` and ``source`` are required. Whoever queues a job writes this, so every field is
bounded and checked here, before anything touches the host; ``SpecError.field`` names the field
("source.sha256", "patches[1].text").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..servers.versions import VersionError, version_parse

MAX_NAME = 100
MAX_PATCHES = 50
MAX_PATCH_BYTES = 10 * 1024 * 1024
MAX_FLAGS = 50
MAX_FLAG_CHARS = 300
MAX_CFLAGS_CHARS = 1000
MAX_CONTRIB = 60

# \Z, not $: a value ending in a newline must not slip through.
_HEX64 = re.compile(r"^[0-9a-f]{64}\Z")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}\Z")
_PATCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}\Z")
_CONTRIB = re.compile(r"^[a-z][a-z0-9_]{0,62}\Z")
# configure's feature switches only: installation directories, cache files, host triplets and
# VAR=value assignments all change where or how things land and stay under the agent's control.
_FLAG = re.compile(r"^--(?:enable|disable|with|without)-[a-z0-9][a-z0-9-]*(?:=[^\x00-\x1f]*)?\Z")
_LOCATION_FLAGS = re.compile(
    r"^--(?:prefix|exec-prefix|bindir|sbindir|libexecdir|sysconfdir|sharedstatedir|"
    r"localstatedir|runstatedir|libdir|includedir|oldincludedir|datarootdir|datadir|infodir|"
    r"localedir|mandir|docdir|htmldir|dvidir|pdfdir|psdir|srcdir)(?:=|$)"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class SpecError(ValueError):
    """The spec is unusable; ``field`` is the path of the offending field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class ReleaseSource:
    """An official release by name ("15.18", "14beta1", "9.6.24")."""

    version: str
    kind: str = "release"


@dataclass(frozen=True)
class TarballSource:
    """A source tarball at an https URL or a path on the agent host, with its sha256."""

    sha256: str
    url: str | None = None
    path: str | None = None
    kind: str = "tarball"


@dataclass(frozen=True)
class GitSource:
    """A repository and either a ref, or a branch and a date (its last commit by that day's end,
    UTC)."""

    url: str
    ref: str | None = None
    branch: str | None = None
    date: dt.date | None = None
    kind: str = "git"


Source = ReleaseSource | TarballSource | GitSource


@dataclass(frozen=True)
class Patch:
    name: str
    sha256: str
    text: str


@dataclass(frozen=True)
class BuildSpec:
    name: str
    source: Source
    patches: tuple[Patch, ...] = ()
    configure_flags: tuple[str, ...] = ()
    cflags: str | None = None
    contrib: tuple[str, ...] = ()
    major_defaults: bool = True

    def as_dict(self) -> dict[str, Any]:
        """The spec as JSON data again (patch texts included)."""
        source = {k: v for k, v in vars(self.source).items() if v is not None}
        if isinstance(self.source, GitSource) and self.source.date is not None:
            source["date"] = self.source.date.isoformat()
        return {
            "name": self.name,
            "source": source,
            "patches": [vars(p) for p in self.patches],
            "configure_flags": list(self.configure_flags),
            "cflags": self.cflags,
            "contrib": list(self.contrib),
            "major_defaults": self.major_defaults,
        }


def spec_from_json(text: str | bytes) -> BuildSpec:
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError("(document)", f"not JSON: {exc}") from None
    return spec_parse(data)


def spec_parse(data: Any) -> BuildSpec:
    """Check every field of ``data`` (parsed JSON) and return the spec; SpecError otherwise."""
    obj = _object(data, "(document)")
    _no_unknown(obj, "", {"name", "source", "patches", "configure_flags", "cflags", "contrib",
                          "major_defaults"})  # fmt: skip
    cflags = _optional_str(obj.get("cflags"), "cflags", MAX_CFLAGS_CHARS)
    defaults = obj.get("major_defaults", True)
    if not isinstance(defaults, bool):
        raise SpecError("major_defaults", "must be true or false")
    return BuildSpec(
        name=_name(obj.get("name")),
        source=_source(obj.get("source")),
        patches=_patches(obj.get("patches", [])),
        configure_flags=_flags(obj.get("configure_flags", [])),
        cflags=cflags or None,
        contrib=_contrib(obj.get("contrib", [])),
        major_defaults=defaults,
    )


# --- fields ----------------------------------------------------------------------------------


def git_ref_parse(url: Any, ref: Any) -> GitSource:
    """A repository and a ref as a git source takes them (a bisection's ends): SpecError
    naming ``source.url`` or ``source.ref`` otherwise."""
    return _git({"kind": "git", "url": url, "ref": ref})


def _name(value: Any) -> str:
    name = _optional_str(value, "name", MAX_NAME)
    if not name or not name.strip():
        raise SpecError("name", "is required (the build's name as users say it, e.g. 14beta1)")
    return name.strip()


def _source(value: Any) -> Source:
    obj = _object(value, "source")
    kind = obj.get("kind")
    if kind == "release":
        _no_unknown(obj, "source.", {"kind", "version"})
        return ReleaseSource(version=_release(obj.get("version")))
    if kind == "tarball":
        return _tarball(obj)
    if kind == "git":
        return _git(obj)
    raise SpecError("source.kind", "must be one of release, tarball, git")


def _release(value: Any) -> str:
    """A released version by its exact name (the tarball's): BenchHub's version grammar, minus
    bare majors, snapshots, commits and patch labels, which name no tarball."""
    problem = "must be a release name such as 15.18, 14beta1 or 9.6.24"
    if not isinstance(value, str) or value != value.strip().lower():
        raise SpecError("source.version", problem)
    try:
        version = version_parse(value)
    except VersionError:
        raise SpecError("source.version", problem) from None
    if version.series or version.needs_build or version.stage == "devel":
        raise SpecError("source.version", problem)
    return value


def _tarball(obj: Mapping[str, Any]) -> TarballSource:
    _no_unknown(obj, "source.", {"kind", "url", "path", "sha256"})
    sha = _sha256(obj.get("sha256"), "source.sha256")
    url, path = obj.get("url"), obj.get("path")
    if (url is None) == (path is None):
        raise SpecError("source.url", "give exactly one of url (https) or path (on the agent)")
    if url is not None:
        return TarballSource(sha256=sha, url=_http_url(url, "source.url"))
    if not isinstance(path, str) or _CONTROL.search(path) or not path.startswith("/"):
        raise SpecError("source.path", "must be an absolute path on the agent host")
    if ".." in PurePosixPath(path).parts:
        raise SpecError("source.path", "must not contain '..'")
    return TarballSource(sha256=sha, path=path)


def _git(obj: Mapping[str, Any]) -> GitSource:
    _no_unknown(obj, "source.", {"kind", "url", "ref", "branch", "date"})
    url = _git_url(obj.get("url"))
    ref, branch, date = obj.get("ref"), obj.get("branch"), obj.get("date")
    if ref is not None:
        if branch is not None or date is not None:
            raise SpecError("source.ref", "give either ref, or branch and date, not both")
        return GitSource(url=url, ref=_ref(ref, "source.ref"))
    if branch is None or date is None:
        raise SpecError("source.ref", "give a ref (commit, tag, branch), or a branch and a date")
    if not isinstance(date, str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
        raise SpecError("source.date", "must be a date as YYYY-MM-DD")
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise SpecError("source.date", f"{date} is not a calendar date") from None
    return GitSource(url=url, branch=_ref(branch, "source.branch"), date=day)


def _git_url(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 500 or _CONTROL.search(value):
        raise SpecError("source.url", "must be a repository URL of at most 500 characters")
    if value.startswith("/"):
        return value
    scheme = urllib.parse.urlsplit(value).scheme
    if scheme in ("git", "file"):
        return value
    return _http_url(value, "source.url")


def _http_url(value: Any, field: str) -> str:
    if not isinstance(value, str) or len(value) > 1000 or _CONTROL.search(value):
        raise SpecError(field, "must be a URL of at most 1000 characters")
    parts = urllib.parse.urlsplit(value)
    # Plain http only to this machine (tests' local servers): elsewhere it can be tampered with.
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and local)):
        raise SpecError(field, "must be an https URL")
    return value


def _ref(value: Any, field: str) -> str:
    if not isinstance(value, str) or not _REF.match(value) or ".." in value:
        raise SpecError(field, "must be a commit, tag or branch name (letters, digits, ._/+-)")
    if value.endswith((".lock", "/")) or "@{" in value:
        raise SpecError(field, f"{value!r} is not a valid git ref name")
    return value


def _patches(value: Any) -> tuple[Patch, ...]:
    items = _list(value, "patches", MAX_PATCHES)
    patches = []
    for i, item in enumerate(items):
        where = f"patches[{i}]"
        obj = _object(item, where)
        _no_unknown(obj, f"{where}.", {"name", "sha256", "text"})
        name = obj.get("name")
        if not isinstance(name, str) or not _PATCH_NAME.match(name):
            raise SpecError(f"{where}.name", "must be a file-like name (letters, digits, ._+-)")
        sha = _sha256(obj.get("sha256"), f"{where}.sha256")
        text = obj.get("text")
        if not isinstance(text, str) or not text or "\x00" in text:
            raise SpecError(f"{where}.text", "must be the patch as non-empty text")
        raw = text.encode("utf-8", errors="surrogatepass")
        if len(raw) > MAX_PATCH_BYTES:
            raise SpecError(f"{where}.text", f"is larger than {MAX_PATCH_BYTES} bytes")
        if hashlib.sha256(raw).hexdigest() != sha:
            raise SpecError(f"{where}.sha256", "does not match the text (sha256 of its UTF-8)")
        patches.append(Patch(name=name, sha256=sha, text=text))
    if len({p.name for p in patches}) != len(patches):
        raise SpecError("patches", "patch names must be unique")
    return tuple(patches)


def _flags(value: Any) -> tuple[str, ...]:
    flags = []
    for i, flag in enumerate(_list(value, "configure_flags", MAX_FLAGS)):
        where = f"configure_flags[{i}]"
        if not isinstance(flag, str) or len(flag) > MAX_FLAG_CHARS:
            raise SpecError(where, f"must be a string of at most {MAX_FLAG_CHARS} characters")
        if _LOCATION_FLAGS.match(flag):
            raise SpecError(where, f"{flag} changes install locations, which the agent owns")
        if not _FLAG.match(flag):
            raise SpecError(
                where, f"{flag!r} is not a --enable-/--disable-/--with-/--without- switch"
            )
        flags.append(flag)
    return tuple(flags)


def _contrib(value: Any) -> tuple[str, ...]:
    names = set()
    for i, name in enumerate(_list(value, "contrib", MAX_CONTRIB)):
        if not isinstance(name, str) or not _CONTRIB.match(name):
            raise SpecError(f"contrib[{i}]", "must be a contrib module name like pg_prewarm")
        names.add(name)
    # Order does not change what gets installed, so one order keeps one install per set.
    return tuple(sorted(names))


# --- helpers ---------------------------------------------------------------------------------


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SpecError(field, "must be a JSON object")
    return value


def _list(value: Any, field: str, limit: int) -> Sequence[Any]:
    if not isinstance(value, list):
        raise SpecError(field, "must be a list")
    if len(value) > limit:
        raise SpecError(field, f"has more than {limit} entries")
    return value


def _no_unknown(obj: Mapping[str, Any], prefix: str, known: set[str]) -> None:
    unknown = sorted(str(k) for k in obj if k not in known)
    if unknown:
        raise SpecError(
            f"{prefix}{unknown[0]}", f"unknown field (known: {', '.join(sorted(known))})"
        )


def _optional_str(value: Any, field: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit or _CONTROL.search(value):
        raise SpecError(field, f"must be one line of at most {limit} characters")
    return value


def _sha256(value: Any, field: str) -> str:
    if not isinstance(value, str) or not _HEX64.match(value.lower()):
        raise SpecError(field, "must be a sha256 as 64 hexadecimal digits")
    return value.lower()
