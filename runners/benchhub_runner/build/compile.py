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

import shutil
from pathlib import Path

from ..servers.versions import VersionError, version_major
from .errors import BuildError
from .majors import MajorDefaults, defaults_for
from .sources import SourceCache
from .spec import BuildSpec
from .stages import Compiled, CompileStages
from .tarballs import ResolvedSource
from .toolchain import generators_missing
from .trees import BuildTree, configure_input, patch_paths


class Compiler(CompileStages):
    """Builds one spec in ``tree``, the kept tree of its source (a git repository's, moved from
    commit to commit, or a tarball's)."""

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
