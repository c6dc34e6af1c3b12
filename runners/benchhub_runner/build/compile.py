"""From a resolved source to an installed prefix: unpack, patch, configure, make, install.

Everything here that reads or runs the source runs through ``Steps`` as the unprivileged
account; the agent itself only creates directories, hands them over, and reads results.
The build tree is always ``<builds>/work/src``: one fixed path, so ccache's hashes (which include
the compile directory for debug info) match across builds of different sources.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..account import Account
from ..versions import VersionError, version_major
from .errors import BuildError
from .majors import MajorDefaults, defaults_for
from .settings import BuildSettings
from .sources import ResolvedSource, SourceCache
from .spec import BuildSpec
from .steps import Steps

MAX_REJECTS_CHARS = 4000
_PACKAGE_VERSION = re.compile(r"^PACKAGE_VERSION='([^']+)'", re.MULTILINE)


@dataclass(frozen=True)
class Toolchain:
    """The compiler and how it is driven; ``version`` is part of every install key."""

    cc: str
    version: str
    ccache: str | None
    ccache_dir: Path | None
    jobs: int

    @property
    def cc_command(self) -> str:
        return f"{self.ccache} {self.cc}" if self.ccache else self.cc

    def env(self, *, work: Path) -> dict[str, str]:
        if not self.ccache or self.ccache_dir is None:
            return {}
        # The tree's path is fixed already; BASEDIR and NOHASHDIR also let a moved cache or a
        # second agent's tree share hits.
        return {
            "CCACHE_DIR": str(self.ccache_dir),
            "CCACHE_BASEDIR": str(work),
            "CCACHE_NOHASHDIR": "1",
        }


def toolchain_for(settings: BuildSettings, *, builds_root: Path) -> Toolchain:
    """The host's compiler (its ``--version`` first line) and ccache per the settings.
    ValueError when the compiler is missing, or ccache is "on" and missing."""
    cc = shutil.which(settings.cc)
    if cc is None:
        raise ValueError(f"no C compiler {settings.cc!r} on PATH")
    # The host's own compiler, not code from a source: safe to run as the agent.
    done = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    version = (done.stdout.splitlines() or ["unknown"])[0].strip()
    ccache = shutil.which("ccache") if settings.ccache != "off" else None
    if settings.ccache == "on" and ccache is None:
        raise ValueError("ccache = on, but there is no ccache on PATH")
    ccache_dir = (settings.ccache_dir or builds_root / "ccache") if ccache else None
    return Toolchain(settings.cc, version, ccache, ccache_dir, settings.make_jobs)


GENERATORS = ("bison", "flex", "perl")


def generators_missing(src: Path) -> list[str]:
    """The tools a tree without its generated files (gram.c, scan.c, ...) needs and this host's
    PATH lacks. Release tarballs up to 16 ship those files; 17 dropped them, and git never had
    them."""
    if (src / "src" / "backend" / "parser" / "gram.c").exists():
        return []
    return [tool for tool in GENERATORS if shutil.which(tool) is None]


@dataclass
class Compiled:
    """What the build did, for the provenance."""

    version: str
    major: str
    defaults: MajorDefaults | None
    configure_args: list[str]
    copt: list[str]
    contrib: list[str]
    ccache: dict[str, Any] = field(default_factory=dict)
    postgres_version: str = ""
    pg_config: dict[str, str] = field(default_factory=dict)


class Compiler:
    def __init__(
        self,
        *,
        steps: Steps,
        work: Path,
        account: Account | None,
        toolchain: Toolchain,
    ) -> None:
        self.steps = steps
        self.work = work
        self.src = work / "src"
        self.account = account
        self.toolchain = toolchain

    def run(
        self, *, spec: BuildSpec, resolved: ResolvedSource, sources: SourceCache, prefix: Path
    ) -> Compiled:
        self._unpack(resolved, sources)
        version = self._version()
        try:
            major = version_major(version)
        except VersionError as exc:
            raise self.steps.fail("unpack", f"configure names an unknown version: {exc}") from exc
        defaults = defaults_for(major) if spec.major_defaults else None
        label = f"{defaults.major} ({defaults.verified})" if defaults else "none"
        self.steps.note("unpack", f"PostgreSQL {version}; per-major defaults: {label}")
        contrib = sorted({*spec.contrib, *(defaults.contrib if defaults else ())})
        for name in contrib:
            if not (self.src / "contrib" / name / "Makefile").is_file():
                raise self.steps.fail("configure", f"this source has no contrib module {name!r}")
        self._patch(spec)
        if missing := generators_missing(self.src):
            raise self.steps.fail(
                "configure",
                "this source carries no generated parser files (a git checkout, or a release "
                f"from 17 on), so the build needs {', '.join(missing)} on this host "
                "(Debian: apt-get install bison flex perl)",
            )
        configure_args = self._configure(spec, defaults, prefix)
        copt = list(defaults.copt) if defaults else []
        compiled = Compiled(version, major, defaults, configure_args, copt, contrib)
        self._make(compiled)
        self._install(compiled, prefix)
        return compiled

    # --- stages --------------------------------------------------------------------------------

    def _unpack(self, resolved: ResolvedSource, sources: SourceCache) -> None:
        self.steps.note("unpack", "unpacking the source")
        shutil.rmtree(self.work, ignore_errors=True)
        for sub in (self.work, self.src, self.work / "tmp", self.work / "patches"):
            sub.mkdir(parents=True)
            sub.chmod(0o755)
        self._give(self.src, self.work / "tmp")
        if resolved.tarball is not None:
            tar = resolved.tarball
            strip = ["--strip-components=1"]
        else:
            assert resolved.commit is not None and resolved.repository is not None
            tar = sources.root / "tmp" / f"{resolved.commit}.tar"
            mirror = sources.mirror_path(resolved.repository)
            self.steps.run(
                ["git", "--git-dir", str(mirror), "archive", "--format=tar", "-o", str(tar),
                 resolved.commit],
                stage="unpack", cwd=sources.root, privileged=True,
            )  # fmt: skip
            strip = []
        try:
            self.steps.run(
                ["tar", "-xf", str(tar), *strip, "--no-same-owner", "-C", str(self.src)],
                stage="unpack",
                cwd=self.src,
            )
        finally:
            if resolved.tarball is None:
                tar.unlink(missing_ok=True)

    def _version(self) -> str:
        configure = self.src / "configure"
        try:
            # O_NOFOLLOW: the tree is the unprivileged account's; never read through its links.
            fd = os.open(configure, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
                match = _PACKAGE_VERSION.search(handle.read())
        except OSError as exc:
            raise self.steps.fail(
                "unpack", f"not a PostgreSQL source: no configure at its top ({exc.strerror})"
            ) from exc
        if match is None:
            raise self.steps.fail("unpack", "configure does not say which PostgreSQL it is")
        return match.group(1)

    def _patch(self, spec: BuildSpec) -> None:
        for number, patch in enumerate(spec.patches, start=1):
            path = self.work / "patches" / f"{number:02d}-{patch.name}"
            path.write_bytes(patch.text.encode("utf-8", errors="surrogatepass"))
            path.chmod(0o644)
            self.steps.note("patch", f"applying {patch.name} ({patch.sha256[:12]})")
            argv = ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch"]
            try:
                self.steps.run([*argv, "-i", str(path)], stage="patch", cwd=self.src)
            except BuildError as exc:
                rejects = self._rejects()
                raise self.steps.fail(
                    "patch", f"{patch.name} does not apply; rejected hunks:\n{rejects}"
                ) from exc

    def _rejects(self) -> str:
        texts = []
        for dirpath, _, filenames in os.walk(self.src):
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if name.endswith(".rej") and not path.is_symlink():
                    texts.append(f"--- {path.relative_to(self.src)}\n{path.read_text('utf-8')}")
        text = "\n".join(texts) or "(patch wrote no .rej file: see its output above)"
        return text[:MAX_REJECTS_CHARS]

    def _configure(
        self, spec: BuildSpec, defaults: MajorDefaults | None, prefix: Path
    ) -> list[str]:
        prefix.mkdir(parents=True)
        prefix.chmod(0o755)
        self._give(prefix)
        # Defaults first: configure lets the last of --with-x/--without-x win, so a spec may
        # turn a default back on ("--with-readline").
        args = [f"--prefix={prefix}", *(defaults.configure_flags if defaults else ())]
        args += [*spec.configure_flags, f"CC={self.toolchain.cc_command}"]
        if spec.cflags:
            args.append(f"CFLAGS={spec.cflags}")
        self.steps.note("configure", " ".join(args))
        self.steps.run(["./configure", *args], stage="configure", cwd=self.src)
        return args

    def _make(self, compiled: Compiled) -> None:
        if self.toolchain.ccache:
            self.steps.capture([self.toolchain.ccache, "-z"], stage="make", cwd=self.src)
        jobs = f"-j{self.toolchain.jobs}"
        copt = [f"COPT={' '.join(compiled.copt)}"] if compiled.copt else []
        self.steps.note("make", f"make {jobs}")
        self.steps.run(["make", jobs, *copt], stage="make", cwd=self.src)
        for name in compiled.contrib:
            self.steps.note("make", f"contrib/{name}")
            self.steps.run(["make", "-C", f"contrib/{name}", jobs, *copt], stage="make",
                           cwd=self.src)  # fmt: skip
        if self.toolchain.ccache:
            compiled.ccache = self._ccache_stats()

    def _install(self, compiled: Compiled, prefix: Path) -> None:
        copt = [f"COPT={' '.join(compiled.copt)}"] if compiled.copt else []
        self.steps.note("install", f"make install into {prefix}")
        self.steps.run(["make", "install", *copt], stage="install", cwd=self.src)
        for name in compiled.contrib:
            self.steps.run(["make", "-C", f"contrib/{name}", "install", *copt],
                           stage="install", cwd=self.src)  # fmt: skip
        # Built binaries are code from the source: even --version runs unprivileged.
        out = self.steps.capture([str(prefix / "bin" / "postgres"), "--version"],
                                 stage="install", cwd=self.src)  # fmt: skip
        compiled.postgres_version = out.strip()
        out = self.steps.capture([str(prefix / "bin" / "pg_config")], stage="install",
                                 cwd=self.src)  # fmt: skip
        for line in out.splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                compiled.pg_config[key.strip()] = value.strip()

    def _ccache_stats(self) -> dict[str, Any]:
        assert self.toolchain.ccache is not None
        out = self.steps.capture([self.toolchain.ccache, "--print-stats"], stage="make",
                                 cwd=self.src, check=False)  # fmt: skip
        stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
        hits = sum(int(stats.get(k, 0)) for k in ("direct_cache_hit", "preprocessed_cache_hit"))
        misses = int(stats.get("cache_miss", 0))
        return {"hits": hits, "misses": misses}

    def _give(self, *paths: Path) -> None:
        if self.account is None:
            return
        for path in paths:
            os.chown(path, self.account.uid, self.account.gid)
