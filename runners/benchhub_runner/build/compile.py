"""From a resolved source to an installed prefix: unpack, patch, configure, make, install.

Everything here that reads or runs the source runs through ``Steps`` as the unprivileged
account; the agent itself only creates directories, hands them over, and reads results.
A release or tarball is built in its own kept tree (``trees``), which a patched build of it
starts from; a git commit in its repository's kept tree, moved from the commit it holds when it
can be, else clean; a new tree starts from a copy of a finished one when one fits.
ccache's base directory is the builds root, so its hits carry across trees and kinds of source.
Every build configures with --enable-depend: a kept tree needs make to know which objects a
changed header touches, and one set of compiler flags lets every build share ccache's entries.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
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
from .trees import BuildTree, configure_input, patch_paths

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

    def env(self, *, base: Path) -> dict[str, str]:
        if not self.ccache or self.ccache_dir is None:
            return {}
        # Paths under BASEDIR hash as relative ones, and NOHASHDIR leaves the compile directory
        # out: every kept tree and a second agent's cache share hits.
        return {
            "CCACHE_DIR": str(self.ccache_dir),
            "CCACHE_BASEDIR": str(base),
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


class Compiler:
    """Builds one spec in ``tree``, the kept tree of its source (a git repository's, moved from
    commit to commit, or a tarball's)."""

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

    def run(
        self, *, spec: BuildSpec, resolved: ResolvedSource, sources: SourceCache, prefix: Path
    ) -> Compiled:
        self._fresh_work()
        tree = self.tree
        # What a tree holds: a git commit, or a tarball's digest (a tree that never moves).
        commit = resolved.commit or resolved.digest
        if tree.interrupted():
            self.steps.note("unpack", "discarding the build tree an interrupted build left")
            tree.discard()
        previous, configured = tree.commit(), tree.configure_args()
        tree.begin()
        seed = self.seed if previous is None else None
        if seed is not None:
            previous, configured = self._copy_seed(seed.tree)
            seed = seed if previous is not None else None
        compiled: Compiled | None = None
        if previous is not None:
            try:
                compiled = self._incremental(
                    spec, resolved, sources, prefix, previous, configured,
                    patched=seed is None,
                    diff_repository=seed.repository if seed is not None else None,
                )  # fmt: skip
                if seed is not None:
                    compiled.seeded_from = str(seed.tree.root)
            except BuildError as exc:
                self.steps.note(exc.stage, f"the build moved from {previous[:12]} failed at "
                                f"{exc.stage}; building {commit[:12]} clean")  # fmt: skip
                shutil.rmtree(prefix, ignore_errors=True)
        if compiled is None:
            try:
                compiled = self._clean(spec, resolved, sources, prefix)
            except BuildError as exc:
                if exc.stage == "make" and self._configured is not None:
                    # A clean tree, configured, whose make stopped at an error in the source:
                    # accounted for, so the next commit's make goes on from there. Any other
                    # failure (or a stop) leaves the tree marked, to be discarded.
                    tree.done(commit=commit, configure_args=self._configured)
                raise
        tree.done(commit=commit, configure_args=compiled.configure_args,
                  repository=resolved.repository, seed_key=self.seed_key)  # fmt: skip
        return compiled

    def _copy_seed(self, seed: BuildTree) -> tuple[str | None, list[str] | None]:
        """Fill the (new) kept tree with a copy of ``seed``'s, objects and timestamps kept, as
        the runner account; (the seed's commit, its configure arguments), or (None, None) when
        the copy failed and the tree is to be built clean."""
        commit, configured = seed.commit(), seed.configure_args()
        if commit is None:
            return None, None
        shutil.rmtree(self.src, ignore_errors=True)
        self.src.mkdir(parents=True)
        self.src.chmod(0o755)
        self._give(self.src)
        self.steps.note("unpack", f"starting the build tree from a copy of the tree at "
                        f"{commit[:12]} ({seed.root.name[:12]})")  # fmt: skip
        try:
            self.steps.run(["cp", "-a", "--", f"{seed.src}/.", str(self.src)], stage="unpack",
                           cwd=self.src)  # fmt: skip
        except BuildError as exc:
            self.steps.note("unpack", f"the copy failed ({exc}); building clean")
            return None, None
        return commit, configured

    def _clean(
        self, spec: BuildSpec, resolved: ResolvedSource, sources: SourceCache, prefix: Path
    ) -> Compiled:
        self._configured = None
        self._unpack(resolved, sources)
        version, defaults, contrib = self._inspect(spec)
        self._patch(spec)
        self._check_generators()
        configure_args = self._configure(spec, defaults, prefix)
        return self._compile(spec, version, defaults, contrib, configure_args, prefix)

    def _incremental(
        self,
        spec: BuildSpec,
        resolved: ResolvedSource,
        sources: SourceCache,
        prefix: Path,
        previous: str,
        configured: list[str] | None,
        *,
        patched: bool = True,
        diff_repository: str | None = None,
    ) -> Compiled:
        """Move the kept tree from ``previous`` (configured with ``configured``; with the spec's
        patches applied unless ``patched`` is false, as in a copy of a seed) to the resolved
        commit and build there. The files that differ are read from the mirror of
        ``diff_repository`` (default: the source's own), which holds both commits."""
        target = resolved.commit or resolved.digest
        changed: list[str] = []
        deleted: list[str] = []
        if previous != target:
            assert resolved.commit is not None and resolved.repository is not None
            changed, deleted = sources.changes(diff_repository or resolved.repository, previous,
                                               resolved.commit, self.steps)  # fmt: skip
            self.steps.note("unpack", f"moving the build tree from {previous[:12]} to "
                            f"{target[:12]} (files changed or added: {len(changed)}, "
                            f"removed: {len(deleted)})")  # fmt: skip
        else:
            self.steps.note("unpack", f"the build tree already holds {target[:20]}")
        if patched:
            self._patch(spec, reverse=True)
        self._update(resolved, sources, changed, deleted)
        version, defaults, contrib = self._inspect(spec)
        self._patch(spec)
        self._check_generators()
        args = configured
        touched = [*changed, *deleted]
        if not patched:
            # Patches applied on top of a seed's tree may change configure's inputs too.
            touched += [path for patch in spec.patches for path in patch_paths(patch.text)]
        if args is None or any(configure_input(p) for p in touched):
            args = self._configure(spec, defaults, prefix)
        else:
            self.steps.note("configure", "configure's inputs are unchanged: not run again")
        compiled = self._compile(spec, version, defaults, contrib, args, prefix)
        compiled.mode = f"incremental from {previous}"
        return compiled

    def _inspect(self, spec: BuildSpec) -> tuple[str, MajorDefaults | None, list[str]]:
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
        return version, defaults, contrib

    def _check_generators(self) -> None:
        if missing := generators_missing(self.src):
            raise self.steps.fail(
                "configure",
                "this source carries no generated parser files (a git checkout, or a release "
                f"from 17 on), so the build needs {', '.join(missing)} on this host "
                "(Debian: apt-get install bison flex perl)",
            )

    def _compile(
        self,
        spec: BuildSpec,
        version: str,
        defaults: MajorDefaults | None,
        contrib: list[str],
        configure_args: list[str],
        prefix: Path,
    ) -> Compiled:
        major = version_major(version)
        copt = list(defaults.copt) if defaults else []
        compiled = Compiled(version, major, defaults, configure_args, copt, contrib)
        self._make(compiled)
        self._install(compiled, prefix)
        return compiled

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
        if self.toolchain.ccache:
            self.steps.capture([self.toolchain.ccache, "-z"], stage="make", cwd=self.src)
        jobs = f"-j{self.toolchain.jobs}"
        make_vars = self._make_vars(compiled)
        self.steps.note("make", f"make {jobs}")
        self.steps.run(["make", jobs, *make_vars], stage="make", cwd=self.src)
        for name in compiled.contrib:
            self.steps.note("make", f"contrib/{name}")
            self.steps.run(["make", "-C", f"contrib/{name}", jobs, *make_vars], stage="make",
                           cwd=self.src)  # fmt: skip
        if self.toolchain.ccache:
            compiled.ccache = self._ccache_stats()

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
