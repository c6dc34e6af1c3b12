"""``ensure_build``: the installation for a build spec, from the cache or built now.

The integrator's whole interface::

    with ensure_build(spec, cache_dir=config.cache_dir, settings=config.build,
                      progress=report, stop=stop_event) as build:
        build.installation   # provision.Installation (origin "built"), for Cluster
        build.provenance     # JSON-ready dict, the same one stored beside the install
        build.reused         # True when nothing was built

Hold the ``Build`` (``with``, or ``close()`` later) for as long as its installation is in use:
eviction never removes an install someone holds. Errors: ``SpecError`` never (the spec is
already parsed), ``BuildError`` (with ``stage`` and ``log_tail``) when the build fails,
``BuildStopped`` when ``stop`` was set.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from ..sandbox.account import Account, runner_account
from ..servers.bindirs import CLIENT_TOOLS, SERVER_TOOLS
from ..servers.installation import Installation
from .compile import Compiler
from .errors import BuildError
from .installs import MARKER, USED, Hold, InstallCache, install_key
from .majors import table_digest
from .provenance import provenance_record
from .settings import BuildSettings
from .sources import GIT_ENV, CommitRange, SourceCache
from .spec import BuildSpec, Source
from .stages import Seed
from .steps import ProgressCallback, Steps, clean_env
from .tarballs import ResolvedSource
from .toolchain import Toolchain, toolchain_for
from .trees import BuildTree, find_seeds, prune_trees

# Bump when the builder changes what an install holds; old installs then age out.
# 2: every build configures with --enable-depend; git builds come from kept, movable trees.
BUILDER_FORMAT = 2
PROVENANCE = "provenance.json"
# Kept build trees (about 400 MB each): a bisection needs one, a patched build the unpatched
# tree to start from; a few more let a host alternate between repositories, releases or
# configurations without starting over.
MAX_TREES = 3
# Every kept tree's configured prefix, which nothing creates: installs are staged and moved.
TREE_PREFIX = "tree-prefix"


class Build:
    """An installation ready to use, its provenance, and a hold on it against eviction."""

    def __init__(
        self, *, installation: Installation, provenance: dict[str, Any], reused: bool, hold: Hold
    ) -> None:
        self.installation = installation
        self.provenance = provenance
        self.reused = reused
        self._hold = hold

    def close(self) -> None:
        self._hold.close()

    def __enter__(self) -> Build:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def ensure_build(
    spec: BuildSpec,
    *,
    cache_dir: Path,
    settings: BuildSettings | None = None,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
) -> Build:
    """The installation of ``spec``: reused when an install of the same resolved input exists,
    else built (one build at a time per host), then the cache trimmed to its size limit.

    ``cache_dir`` is the agent's cache directory (``Config.cache_dir``); builds live in
    ``cache_dir/builds``, which the runner account must be able to traverse. ``progress`` gets
    ``BuildProgress`` reports in the calling thread; setting ``stop`` ends the build within a
    second or so with ``BuildStopped``. Raises ``BuildError`` naming the failed stage.
    """
    settings = settings or BuildSettings()
    stop = stop or threading.Event()
    cache = InstallCache(Path(cache_dir).absolute() / "builds")
    account = runner_account()
    try:
        toolchain = toolchain_for(settings, builds_root=cache.root)
    except ValueError as exc:
        raise BuildError("configure", str(exc)) from None
    steps = _steps(cache, account, toolchain, progress=progress, stop=stop)
    try:
        sources = SourceCache(
            cache.root / "sources",
            release_url=settings.release_url,
            source_dirs=settings.source_dirs,
            allow_private=settings.allow_private_sources,
        )
        resolved = sources.resolve(spec.source, steps)
        key = install_key(_key_inputs(spec, resolved, toolchain))
        hold = cache.hold(key)
        try:
            build = _reuse(cache, key, hold, steps)
            if build is None:
                with cache.build_lock(stop=stop, waiting=lambda: _waiting(steps)):
                    build = _reuse(cache, key, hold, steps) or _build(
                        spec, resolved, key, hold,
                        cache=cache, sources=sources, toolchain=toolchain, steps=steps,
                        account=account,
                    )  # fmt: skip
                cache.evict(max_bytes=settings.max_cache_bytes)
        except BaseException:
            hold.close()
            raise
    finally:
        steps.close()
        cache.prune_logs()
    return build


def resolve_source(
    source: Source,
    *,
    cache_dir: Path,
    settings: BuildSettings | None = None,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
) -> ResolvedSource:
    """The exact input ``source`` names now (commit and commit date, or tarball sha256),
    fetching into the source cache as needed but building nothing. BuildError at fetch or
    resolve; the resolution's log is discarded when it succeeds."""
    settings = settings or BuildSettings()
    cache = InstallCache(Path(cache_dir).absolute() / "builds")
    env = clean_env(home=cache.root, extra=_git_env())
    steps = Steps(log_path=cache.new_log(), account=None, env=env, progress=progress, stop=stop)
    try:
        sources = SourceCache(
            cache.root / "sources",
            release_url=settings.release_url,
            source_dirs=settings.source_dirs,
            allow_private=settings.allow_private_sources,
        )
        resolved = sources.resolve(source, steps)
    finally:
        steps.close()
    steps.log_path.unlink(missing_ok=True)
    return resolved


def commit_range(
    url: str,
    good: str,
    bad: str,
    *,
    cache_dir: Path,
    settings: BuildSettings | None = None,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
) -> CommitRange:
    """The commits of a git repository a bisection searches between ``good`` and ``bad`` (refs
    as a recipe takes them), from the source cache's mirror, with both ends resolved to full
    shas. BuildError at fetch or resolve."""
    settings = settings or BuildSettings()
    cache = InstallCache(Path(cache_dir).absolute() / "builds")
    env = clean_env(home=cache.root, extra=_git_env())
    steps = Steps(log_path=cache.new_log(), account=None, env=env, progress=progress, stop=stop)
    try:
        sources = SourceCache(
            cache.root / "sources",
            release_url=settings.release_url,
            source_dirs=settings.source_dirs,
            allow_private=settings.allow_private_sources,
        )
        found = sources.commit_range(url, good, bad, steps)
    finally:
        steps.close()
    steps.log_path.unlink(missing_ok=True)
    return found


def _steps(
    cache: InstallCache,
    account: Account | None,
    toolchain: Toolchain,
    *,
    progress: ProgressCallback | None,
    stop: threading.Event,
) -> Steps:
    tmp = cache.work / "tmp"
    extra = {**toolchain.env(base=cache.root), **_git_env(), "TMPDIR": str(tmp)}
    env = clean_env(home=tmp, extra=extra)
    return Steps(log_path=cache.new_log(), account=account, env=env, progress=progress, stop=stop)


def _key_inputs(spec: BuildSpec, resolved: ResolvedSource, toolchain: Toolchain) -> dict[str, Any]:
    """Everything that changes the installed files; not the name, parallelism or ccache."""
    return {"source": resolved.digest, **_configuration(spec, toolchain)}


def _tree(cache: InstallCache, spec: BuildSpec, resolved: ResolvedSource, toolchain: Toolchain,
          *, patches: bool = True) -> BuildTree:  # fmt: skip
    """The kept tree of a git source's repository, or of a tarball, and the build
    configuration (without the spec's patches unless ``patches``)."""
    if resolved.commit is not None and resolved.repository is not None:
        where = {"repository": resolved.repository}
    else:
        where = {"source": resolved.digest}
    inputs = {**where, **_configuration(spec, toolchain, patches=patches)}
    return BuildTree(cache.root / "trees" / install_key(inputs), prefix=cache.root / TREE_PREFIX)


def _seed(cache: InstallCache, spec: BuildSpec, resolved: ResolvedSource, toolchain: Toolchain,
          tree: BuildTree, *, sources: SourceCache, steps: Steps) -> Seed | None:  # fmt: skip
    """The finished tree a new ``tree`` starts from: the same repository's tree without the
    patches, else the most recently used of the same configuration; only one whose commit and
    the one to build are both in a mirror, to tell the files that differ (commits of the same id
    are the same files, whichever repository holds them)."""
    if tree.commit() is not None:
        return None
    unpatched = _tree(cache, spec, resolved, toolchain, patches=False)
    candidates = find_seeds(cache.root / "trees", seed_key=_seed_key(spec, toolchain),
                            prefix=tree.prefix, prefer=unpatched.root)  # fmt: skip
    for candidate in candidates:
        commit = candidate.commit()
        if commit == resolved.digest:
            # The same tarball's tree: nothing moves, only the patches go in.
            return Seed(tree=candidate, repository=None)
        if resolved.commit is None or commit is None or commit.startswith("tarball:"):
            continue
        for url in dict.fromkeys([resolved.repository, candidate.repository()]):
            if url and sources.has_commits(url, [commit, resolved.commit], steps):
                return Seed(tree=candidate, repository=url)
    return None


def _seed_key(spec: BuildSpec, toolchain: Toolchain) -> str:
    """What a tree must have been configured with to seed a tree of ``spec``."""
    return install_key({"seed": True, **_configuration(spec, toolchain, patches=False)})


def _configuration(spec: BuildSpec, toolchain: Toolchain, *, patches: bool = True
                   ) -> dict[str, Any]:  # fmt: skip
    return {
        "format": BUILDER_FORMAT,
        "patches": [p.sha256 for p in spec.patches] if patches else [],
        "configure_flags": list(spec.configure_flags),
        "cflags": spec.cflags,
        "contrib": list(spec.contrib),
        "major_defaults": table_digest() if spec.major_defaults else None,
        "compiler": toolchain.version,
    }


def _reuse(cache: InstallCache, key: str, hold: Hold, steps: Steps) -> Build | None:
    if not cache.is_complete(key):
        return None
    provenance = json.loads((cache.entry(key) / PROVENANCE).read_text())
    cache.touch(key)
    steps.note("done", f"reusing the install {cache.entry(key)}")
    # A reused build's log is the one written when it was built; this one only says "reused".
    steps.log_path.unlink(missing_ok=True)
    return Build(
        installation=_installation(cache.entry(key), provenance["version"]),
        provenance=provenance,
        reused=True,
        hold=hold,
    )


def _build(
    spec: BuildSpec,
    resolved: ResolvedSource,
    key: str,
    hold: Hold,
    *,
    cache: InstallCache,
    sources: SourceCache,
    toolchain: Toolchain,
    steps: Steps,
    account: Account | None,
) -> Build:
    started = time.monotonic()
    prefix = cache.entry(key)
    # With the host's build lock held, an unfinished install can only be a dead build's.
    cache.discard_incomplete()
    _prepare_ccache(toolchain, account)
    tree = _tree(cache, spec, resolved, toolchain)
    seed = _seed(cache, spec, resolved, toolchain, tree, sources=sources, steps=steps)
    keep = {tree.root} | ({seed.tree.root} if seed is not None else set())
    prune_trees(cache.root / "trees", keep=keep, max_trees=MAX_TREES)
    compiler = Compiler(
        steps=steps, work=cache.work, account=account, toolchain=toolchain, tree=tree, seed=seed,
        seed_key=None if spec.patches else _seed_key(spec, toolchain),
    )  # fmt: skip
    try:
        compiled = compiler.run(spec=spec, resolved=resolved, sources=sources, prefix=prefix)
    except BaseException:
        shutil.rmtree(prefix, ignore_errors=True)
        raise
    seconds = round(time.monotonic() - started, 1)
    provenance = provenance_record(spec, resolved, compiled, toolchain, key=key, seconds=seconds)
    provenance["log"] = str(prefix / "build.log")
    provenance["install_dir"] = str(prefix)
    provenance["build_tree"] = str(tree.root)
    if compiled.seeded_from is not None:
        provenance["build_tree_seed"] = compiled.seeded_from
    steps.note("done", f"built {compiled.version} ({compiled.mode}) in {seconds} s into {prefix}")
    _seal(prefix, account)
    # The log moves in before the marker: a complete install always has its log.
    os.replace(steps.log_path, prefix / "build.log")
    _write_new(prefix / PROVENANCE, json.dumps(provenance, indent=2) + "\n")
    _write_new(prefix / USED, "")
    _write_new(prefix / MARKER, key + "\n")
    return Build(
        installation=_installation(prefix, compiled.version),
        provenance=provenance,
        reused=False,
        hold=hold,
    )


def _installation(prefix: Path, version: str) -> Installation:
    bindir = prefix / "bin"
    tools = frozenset(t for t in SERVER_TOOLS + CLIENT_TOOLS if os.access(bindir / t, os.X_OK))
    return Installation(bindir=bindir, version=version, origin="built", tools=tools)


def _prepare_ccache(toolchain: Toolchain, account: Account | None) -> None:
    if toolchain.ccache_dir is None:
        return
    toolchain.ccache_dir.mkdir(parents=True, exist_ok=True)
    if account is not None:
        os.chown(toolchain.ccache_dir, account.uid, account.gid)


def _seal(prefix: Path, account: Account | None) -> None:
    """Hand the finished install to root: the servers run as the runner account, and a job's
    SQL (COPY TO a file, as superuser) must not be able to alter binaries later jobs use."""
    if account is None:
        return
    # Top first, so nothing new can appear in it; lchown, so no planted link is followed.
    os.chown(prefix, 0, 0, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(prefix):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), 0, 0, follow_symlinks=False)


def _write_new(path: Path, text: str) -> None:
    # Written beside and renamed over: a rename replaces a planted link instead of following it.
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(staging, path)


def _waiting(steps: Steps) -> None:
    steps.report("wait", "waiting for another build on this host to finish")


def _git_env() -> dict[str, str]:
    proxies = {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}
    return {**GIT_ENV, **proxies}
