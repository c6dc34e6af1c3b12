"""The stages of a compile, each run through ``Steps`` as the unprivileged account: unpack or
update the tree, patch, configure, make, install; and what the build did (Compiled). Compiler
(compile.py) orders them and keeps trees."""

from __future__ import annotations

import collections
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sandbox.account import Account
from .errors import BuildError
from .majors import MajorDefaults
from .sources import SourceCache
from .spec import BuildSpec
from .steps import Steps
from .tarballs import ResolvedSource
from .toolchain import Toolchain
from .trees import BuildTree

MAX_REJECTS_CHARS = 4000
# ccache's record of one build's compiles (about 60 bytes a compile: a whole tree is ~200 KB).
CCACHE_STATS_LOG = "ccache-stats.log"
CCACHE_STATS_LOG_MAX = 32 * 1024 * 1024
_PACKAGE_VERSION = re.compile(r"^PACKAGE_VERSION='([^']+)'", re.MULTILINE)


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
    # "clean", or "incremental from <sha>" when a kept tree was moved from that commit.
    mode: str = "clean"
    # The tree a new kept tree was copied from before it was moved, if it was.
    seeded_from: str | None = None


@dataclass(frozen=True)
class Seed:
    """A finished tree to copy into a new one, and the repository whose mirror holds both its
    commit and the one to build."""

    tree: BuildTree
    # None when the seed is a tree of the same tarball (nothing moves).
    repository: str | None


class CompileStages:
    """A compile of one spec in ``tree``: its stages, each a method; Compiler runs them."""

    def __init__(
        self,
        *,
        steps: Steps,
        work: Path,
        account: Account | None,
        toolchain: Toolchain,
        tree: BuildTree,
        seed: Seed | None = None,
        seed_key: str | None = None,
    ) -> None:
        self.steps = steps
        self.work = work
        self.tree = tree
        # What to start ``tree`` from when it holds nothing yet; ``seed_key`` is recorded when
        # ``tree`` itself may seed others (it has no patches).
        self.seed = seed
        self.seed_key = seed_key
        self.src = tree.src
        self.account = account
        self.toolchain = toolchain
        # The arguments of this build's configure, once it succeeded.
        self._configured: list[str] | None = None

    # --- stages --------------------------------------------------------------------------------

    def _fresh_work(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        for sub in (self.work, self.work / "tmp", self.work / "patches"):
            sub.mkdir(parents=True)
            sub.chmod(0o755)
        self._give(self.work / "tmp")

    def _unpack(self, resolved: ResolvedSource, sources: SourceCache) -> None:
        self.steps.note("unpack", "unpacking the source")
        shutil.rmtree(self.src, ignore_errors=True)
        shutil.rmtree(self.tree.stage, ignore_errors=True)
        self.src.mkdir(parents=True)
        self.src.chmod(0o755)
        self._give(self.src)
        if resolved.tarball is not None:
            self._extract(resolved.tarball, strip=True)
            return
        assert resolved.commit is not None and resolved.repository is not None
        tar = self._archive(resolved, sources, [])
        try:
            self._extract(tar, strip=False)
        finally:
            tar.unlink(missing_ok=True)

    def _update(
        self,
        resolved: ResolvedSource,
        sources: SourceCache,
        changed: list[str],
        deleted: list[str],
    ) -> None:
        """Bring the kept tree's sources to the resolved commit: removed files go, changed and
        new ones are extracted with the time of now (-m), so make rebuilds what uses them."""
        for start in range(0, len(deleted), 500):
            self.steps.run(["rm", "-f", "--", *deleted[start : start + 500]],
                           stage="unpack", cwd=self.src)  # fmt: skip
        if not changed:
            return
        tar = self._archive(resolved, sources, changed)
        try:
            self._extract(tar, strip=False, touch=True)
        finally:
            tar.unlink(missing_ok=True)

    def _archive(self, resolved: ResolvedSource, sources: SourceCache, paths: list[str]) -> Path:
        """A tar of the commit (or of ``paths`` in it) from the agent's mirror."""
        assert resolved.commit is not None and resolved.repository is not None
        tar = sources.root / "tmp" / f"{resolved.commit}.tar"
        mirror = sources.mirror_path(resolved.repository)
        # Literal pathspecs: a file name is a name, never a pattern.
        self.steps.run(
            ["git", "--literal-pathspecs", "--git-dir", str(mirror), "archive", "--format=tar",
             "-o", str(tar), resolved.commit, "--", *paths],
            stage="unpack", cwd=sources.root, privileged=True,
        )  # fmt: skip
        return tar

    def _extract(self, tar: Path, *, strip: bool, touch: bool = False) -> None:
        argv = ["tar", "-xf", str(tar), "--no-same-owner", "-C", str(self.src)]
        argv += ["--strip-components=1"] if strip else []
        argv += ["-m"] if touch else []
        self.steps.run(argv, stage="unpack", cwd=self.src)

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

    def _patch(self, spec: BuildSpec, *, reverse: bool = False) -> None:
        """Apply the spec's patches, or (``reverse``, last first) take them back out of a kept
        tree before it moves to another commit."""
        patches = list(enumerate(spec.patches, start=1))
        for number, patch in reversed(patches) if reverse else patches:
            path = self.work / "patches" / f"{number:02d}-{patch.name}"
            path.write_bytes(patch.text.encode("utf-8", errors="surrogatepass"))
            path.chmod(0o644)
            what = "taking back" if reverse else "applying"
            self.steps.note("patch", f"{what} {patch.name} ({patch.sha256[:12]})")
            argv = ["patch", "-p1", "--batch", "--no-backup-if-mismatch"]
            argv += ["-R"] if reverse else ["--forward"]
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
        # Every tree's prefix is the same (see trees); its installs are staged and moved.
        # Defaults first: configure lets the last of --with-x/--without-x win, so a spec may
        # turn a default back on ("--with-readline").
        args = [f"--prefix={self.tree.prefix}", "--enable-depend"]
        args += [*(defaults.configure_flags if defaults else ()), *spec.configure_flags]
        args.append(f"CC={self.toolchain.cc_command}")
        if spec.cflags:
            args.append(f"CFLAGS={spec.cflags}")
        self.steps.note("configure", " ".join(args))
        self.steps.run(["./configure", *args], stage="configure", cwd=self.src)
        self._configured = args
        return args

    def _make_vars(self, compiled: Compiled) -> list[str]:
        make_vars = [f"COPT={' '.join(compiled.copt)}"] if compiled.copt else []
        # Programs and libraries find libpq beside themselves wherever the install moves.
        make_vars.append("rpathdir=$$ORIGIN/../lib")
        return make_vars

    def _make(self, compiled: Compiled) -> None:
        stats_log = self._ccache_stats_log()
        env = {"CCACHE_STATSLOG": str(stats_log)} if stats_log else None
        jobs = f"-j{self.toolchain.jobs}"
        make_vars = self._make_vars(compiled)
        self.steps.note("make", f"make {jobs}")
        self.steps.run(["make", jobs, *make_vars], stage="make", cwd=self.src, env=env)
        for name in compiled.contrib:
            self.steps.note("make", f"contrib/{name}")
            self.steps.run(["make", "-C", f"contrib/{name}", jobs, *make_vars], stage="make",
                           cwd=self.src, env=env)  # fmt: skip
        if stats_log:
            compiled.ccache = self._ccache_stats(stats_log)

    def _install(self, compiled: Compiled, prefix: Path) -> None:
        make_vars = self._make_vars(compiled)
        shutil.rmtree(self.tree.stage, ignore_errors=True)
        self.tree.stage.mkdir()
        self._give(self.tree.stage)
        make_vars.append(f"DESTDIR={self.tree.stage}")
        self.steps.note("install", f"make install into {prefix}")
        jobs = f"-j{self.toolchain.jobs}"
        self.steps.run(["make", jobs, "install", *make_vars], stage="install", cwd=self.src)
        for name in compiled.contrib:
            self.steps.run(["make", "-C", f"contrib/{name}", "install", *make_vars],
                           stage="install", cwd=self.src)  # fmt: skip
        self._move_install(compiled, prefix)
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

    @staticmethod
    def _configured_prefix(compiled: Compiled) -> str:
        """The prefix the tree was configured with (a tree configured before every tree had
        the same prefix, or copied from one, keeps its own)."""
        for arg in compiled.configure_args:
            if arg.startswith("--prefix="):
                return arg.removeprefix("--prefix=")
        raise AssertionError("a kept tree is always configured with --prefix")

    def _move_install(self, compiled: Compiled, prefix: Path) -> None:
        """Move a kept tree's staged install (DESTDIR + its configured prefix) to ``prefix``."""
        staged = Path(f"{self.tree.stage}{self._configured_prefix(compiled)}")
        try:
            # lstat: the stage is the runner account's; a link there is never followed.
            is_dir = stat.S_ISDIR(os.lstat(staged).st_mode)
        except OSError:
            is_dir = False
        if not is_dir:
            raise self.steps.fail("install", f"make install left no directory {staged}")
        shutil.rmtree(prefix, ignore_errors=True)
        os.rename(staged, prefix)
        shutil.rmtree(self.tree.stage, ignore_errors=True)

    def _ccache_stats_log(self) -> Path | None:
        """A new, empty file where ccache records each compile of this build alone: its
        counters (``ccache -s``) are the whole cache's, shared with every build on the host."""
        if not self.toolchain.ccache:
            return None
        # In the tree's root, which is the agent's: the build may write the file, not swap it.
        path = self.tree.root / CCACHE_STATS_LOG
        path.unlink(missing_ok=True)
        path.touch(mode=0o644)
        self._give(path)
        return path

    @staticmethod
    def _ccache_stats(path: Path) -> dict[str, Any]:
        """This build's hits and misses from its stats log: one line per counter a compile
        moved, after a "# <source>" line per compile."""
        try:
            # O_NOFOLLOW and a bound: the build's account wrote this file.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                counters = collections.Counter(handle.read(CCACHE_STATS_LOG_MAX).splitlines())
        except OSError:
            counters = collections.Counter()
        path.unlink(missing_ok=True)
        hits = counters[b"direct_cache_hit"] + counters[b"preprocessed_cache_hit"]
        return {"hits": hits, "misses": counters[b"cache_miss"]}

    def _give(self, *paths: Path) -> None:
        if self.account is None:
            return
        for path in paths:
            os.chown(path, self.account.uid, self.account.gid)
