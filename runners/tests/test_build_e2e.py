"""Real builds of PostgreSQL 15.18 from source, run with the real Cluster and pgbench.

Slow: the plain release build (``pg15_release_builds``, the session's one build that may start
from a cold ccache) compiles all of PostgreSQL on a fresh machine (7 to 13 minutes on the shared
2-core development VM); later builds hit ccache, kept in the test cache between sessions. The
installs live in the session's one build cache (benchhub.testing.builds), which the server's
end-to-end tests share: they reuse these installs, as an agent on a benchmark host would.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from benchhub.testing.builds import ReleaseBuilds, build_cache, release_spec
from build_helpers import commit_file, repo_from_tarball, stale_patch, unified_patch
from conftest import PG15_SHA256, RUNNERS, open_tmpdir

from benchhub_runner.build import BuildError, BuildProgress, BuildStopped, ensure_build, spec_parse
from benchhub_runner.build.installs import MARKER
from benchhub_runner.servers.cluster import Cluster, free_port
from benchhub_runner.servers.installation import Installation

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env(pg15_release_builds: ReleaseBuilds) -> dict[str, Any]:
    """The session's build cache (shared with every build of the session), its mirror and
    settings."""
    return {"cache_dir": build_cache(), "settings": pg15_release_builds.settings,
            "mirror": pg15_release_builds.mirror}  # fmt: skip


def build(
    env: dict[str, Any],
    data: dict[str, Any],
    *,
    source_dirs: tuple[Path, ...] = (),
    allow_private_sources: bool = False,
    **kwargs: Any,
) -> Any:
    """``ensure_build`` of ``data`` with the session's settings; ``source_dirs`` lists where a
    local git repository of the test lies (the agent refuses one elsewhere);
    ``allow_private_sources`` lets a tarball url name the local mirror (127.0.0.1)."""
    spec = spec_parse({"name": "test", **data})
    settings = dataclasses.replace(
        env["settings"], source_dirs=source_dirs, allow_private_sources=allow_private_sources
    )
    return ensure_build(spec, cache_dir=env["cache_dir"], settings=settings, **kwargs)


def select_only_tps(installation: Installation, *, seconds: int = 4) -> float:
    """Start a cluster of ``installation``, load scale 1, and run pgbench -S at one client."""
    workdir = open_tmpdir("benchhub-cluster-")
    bindir = installation.bindir
    cluster = Cluster(
        installation=installation,
        client_bindir=bindir,
        workdir=workdir,
        port=free_port(),
        overrides={"shared_preload_libraries": "pg_stat_statements"},
    )
    try:
        with cluster:
            cluster.sql("CREATE EXTENSION pg_stat_statements SCHEMA public")
            target = ["-h", str(cluster.socket_dir), "-p", str(cluster.port), "-U", "postgres"]
            subprocess.run([str(bindir / "pgbench"), *target, "-i", "-s", "1", "-q", "postgres"],
                           check=True, capture_output=True)  # fmt: skip
            done = subprocess.run(
                [str(bindir / "pgbench"), *target, "-S", "-c", "1", "-T", str(seconds), "postgres"],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            calls = cluster.sql(
                "SELECT sum(calls) FROM public.pg_stat_statements "
                "WHERE query LIKE '%pgbench_accounts%'"
            )
            assert int(calls) > 0, "pg_stat_statements saw no pgbench query"
        match = re.search(r"tps = ([\d.]+)", done.stdout)
        assert match, done.stdout
        return float(match.group(1))
    finally:
        cluster.stop(mode="immediate")
        shutil.rmtree(workdir, ignore_errors=True)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the plain build, reused -----------------------------------------------------------------


@pytest.fixture(scope="module")
def plain(pg15_release_builds: ReleaseBuilds) -> Any:
    result = pg15_release_builds.plain
    result.updates = pg15_release_builds.plain_updates
    return result


def test_it_builds_a_release_and_runs_pgbench_on_it(plain: Any, env: dict[str, Any]) -> None:
    """What only this test proves: the cold path. A release named by its version, fetched from
    a mirror and compiled whole (from an empty ccache on a fresh machine: the session's one cold
    compile), with its provenance, sealed install and a pgbench run with pg_stat_statements."""
    assert not plain.reused
    stages = [u.stage for u in plain.updates]
    for stage in ("fetch", "unpack", "configure", "make", "install", "done"):
        assert stage in stages
    assert max(u.compiled for u in plain.updates) > 500
    prov = plain.provenance
    assert prov["version"] == "15.18"
    assert prov["source"]["release"] == "15.18"
    assert prov["source"]["tarball_sha256"] == PG15_SHA256
    args = prov["configure_args"]
    for flag in ("--without-readline", "--without-zlib", "--without-icu"):
        assert flag in args
    assert prov["major_defaults"]["major"] == "15"
    assert prov["contrib"] == ["pg_stat_statements"]
    assert prov["compiler"]["version"].startswith("gcc")
    assert prov["pg_config"]["VERSION"] == "PostgreSQL 15.18"
    assert "--without-icu" in prov["pg_config"]["CONFIGURE"]
    assert prov["ccache"]["used"] is True
    log = Path(prov["log"])
    assert "make install" in log.read_text()
    assert json.loads((log.parent / "provenance.json").read_text()) == prov
    assert plain.installation.origin == "built"
    assert plain.installation.has("pgbench") and plain.installation.has("psql")
    if os.geteuid() == 0:
        # Sealed: the runner account that runs servers (and job SQL) cannot alter the binaries.
        assert (plain.installation.bindir / "postgres").stat().st_uid == 0
    assert select_only_tps(plain.installation) > 0


def test_it_reuses_the_install_for_the_same_input(plain: Any, env: dict[str, Any]) -> None:
    marker = Path(plain.provenance["install_dir"]) / MARKER
    before = marker.stat().st_mtime_ns
    updates: list[BuildProgress] = []
    with build(env, release_spec(), progress=updates.append) as again:
        assert again.reused
        assert again.provenance == plain.provenance
        assert {u.stage for u in updates} <= {"resolve", "fetch", "done"}
    # The same tarball named by URL is the same input: the same install.
    url = f"{env['mirror']}/v15.18/postgresql-15.18.tar.bz2"
    by_url = release_spec(source={"kind": "tarball", "url": url, "sha256": PG15_SHA256})
    with build(env, by_url, allow_private_sources=True) as same:
        assert same.reused and same.installation.bindir == plain.installation.bindir
    assert marker.stat().st_mtime_ns == before


def test_it_prints_a_reused_build_from_the_command_line(plain: Any, env: dict[str, Any]) -> None:
    spec = env["cache_dir"] / "spec.json"
    spec.write_text(json.dumps(release_spec()))
    argv = [sys.executable, "-m", "benchhub_runner.cli", "build", str(spec), "--cache-dir",
            str(env["cache_dir"]), "--release-url", env["mirror"], "--ccache-dir",
            str(env["settings"].ccache_dir)]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(RUNNERS)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["reused"] is True
    assert out["bindir"] == str(plain.installation.bindir)
    assert out["provenance"]["key"] == plain.provenance["key"]


# --- a patched build -------------------------------------------------------------------------


def test_it_builds_a_patch_that_makes_every_transaction_slower(
    plain: Any, pg15_release_builds: ReleaseBuilds
) -> None:
    patch = pg15_release_builds.patch
    patched = pg15_release_builds.patched
    assert not patched.reused
    prov = patched.provenance
    assert prov["patches"] == [{"name": "slow-commit.patch", "sha256": patch["sha256"]}]
    assert prov["key"] != plain.provenance["key"]
    # Its own tree, started from a copy of the plain release's: only the patched file compiles.
    assert prov["build_mode"] == f"incremental from tarball:{PG15_SHA256}", prov
    assert prov["build_tree_seed"] == plain.provenance["build_tree"] != prov["build_tree"]
    assert prov["ccache"]["hits"] + prov["ccache"]["misses"] < 5, prov["ccache"]
    postgres = Path("bin") / "postgres"
    assert sha256_of(patched.installation.bindir.parent / postgres) != sha256_of(
        plain.installation.bindir.parent / postgres
    )
    fast = select_only_tps(plain.installation)
    slow = select_only_tps(patched.installation)
    # 2 ms per commit caps one client near 500 tps; select-only unpatched runs far above it.
    assert slow < 600 < fast, (fast, slow)


# --- failures and stops ----------------------------------------------------------------------


def test_it_fails_at_patch_with_the_rejected_hunk(env: dict[str, Any], pg15_tarball: Path) -> None:
    text = stale_patch(pg15_tarball)
    patch = {"name": "stale.patch", "sha256": hashlib.sha256(text.encode()).hexdigest(),
             "text": text}  # fmt: skip
    with pytest.raises(BuildError) as caught:
        build(env, release_spec(patches=[patch]))
    error = caught.value
    assert error.stage == "patch"
    assert "stale.patch does not apply" in str(error)
    assert "FAILED" in error.log_tail
    # The rejected hunk itself (the rename met the prototype first).
    assert "+static void CommitTransactionRenamed(void);" in str(error)
    assert error.log_path is not None and error.log_path.is_file()


def test_it_fails_at_configure_with_the_log_tail(env: dict[str, Any]) -> None:
    with pytest.raises(BuildError) as caught:
        build(env, release_spec(configure_flags=["--with-blocksize=3"]))
    assert caught.value.stage == "configure"
    assert "Invalid block size" in caught.value.log_tail
    assert "build failed at configure" in str(caught.value)
    installs = Path(env["cache_dir"]) / "builds" / "installs"
    assert not [p for p in installs.iterdir() if p.is_dir() and not (p / MARKER).exists()]


def test_it_stops_a_build_promptly(env: dict[str, Any]) -> None:
    stop = threading.Event()
    stopped_at: list[float] = []

    def progress(update: BuildProgress) -> None:
        if update.stage == "configure" and "checking" in update.line and not stop.is_set():
            stopped_at.append(time.monotonic())
            stop.set()

    with pytest.raises(BuildStopped) as caught:
        build(env, release_spec(configure_flags=["--enable-debug"]), progress=progress, stop=stop)
    assert caught.value.stage == "configure"
    assert time.monotonic() - stopped_at[0] < 10
    builds = str(Path(env["cache_dir"]) / "builds")
    assert not [pid for pid in _pids() if _cwd(pid).startswith(builds)], "a build process survived"


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


# --- a git source ----------------------------------------------------------------------------


VERSION_C = "src/backend/utils/adt/version.c"


def test_it_moves_a_git_tree_to_the_next_commit_and_installs_what_a_clean_build_does(
    env: dict[str, Any], pg15_tarball: Path
) -> None:
    """What only this test proves: a git commit built in the kept tree moved from the commit
    before it (one backend file changed) installs the same files, the same pg_config and a
    server that answers a query as a clean build of that commit does; a patched build of it,
    in a new tree copied from that one, compiles only the patched file; and a tree that fails
    its incremental build is built again clean rather than trusted. Four builds from a warm
    ccache (two clean, two incremental): about 4 minutes on the shared 2-core VM."""
    root = open_tmpdir("benchhub-origin-")
    try:
        repo = root / "postgresql"
        base = repo_from_tarball(repo, pg15_tarball)
        version_c = (repo / VERSION_C).read_text()
        marked = version_c.replace("PG_VERSION_STR", 'PG_VERSION_STR " (moved tree)"', 1)
        assert marked != version_c
        commit = commit_file(repo, VERSION_C, marked, date="2021-05-01T12:00:00Z",
                             message="version() says which tree")  # fmt: skip

        def git_build(sha: str, *, patches: Any = (), **kwargs: Any) -> Any:
            source = {"kind": "git", "url": str(repo), "ref": sha}
            spec = release_spec(name=f"master@{sha[:7]}", source=source, patches=list(patches))
            return build(env, spec, source_dirs=(root,), **kwargs)

        with git_build(base) as first:
            prov = first.provenance
            assert prov["source"]["commit"] == base
            assert prov["source"]["commit_date"] == "2021-04-30T12:00:00Z"
            assert prov["build_mode"] == "clean"
            assert first.installation.version == "15.18"
            assert select_only_tps(first.installation) > 0
            assert "(moved tree)" not in server_version(first.installation)
        moving: list[BuildProgress] = []
        with git_build(commit, progress=moving.append) as moved:
            assert moved.provenance["build_mode"] == f"incremental from {base}"
            # One backend file changed: configure is not run again, one file is compiled.
            assert any("not run again" in u.line for u in moving), moving
            assert moved.provenance["ccache"]["hits"] + moved.provenance["ccache"]["misses"] < 5
            assert moved.provenance["build_tree"] == prov["build_tree"]
            incremental = install_facts(moved)
            assert "(moved tree)" in incremental["version()"]
        assert moved.provenance["build_seconds"] < prov["build_seconds"], (moved, prov)
        # A patched build of that commit: its own tree, started from a copy of the unpatched
        # one, compiles only what the patch changes and installs the unpatched build's files
        # but the server (every tree has the same configured prefix).
        patched_c = marked.replace("(moved tree)", "(moved tree, patched)", 1)
        text = unified_patch(VERSION_C, marked, patched_c)
        patch = {"name": "say-patched.patch", "text": text,
                 "sha256": hashlib.sha256(text.encode()).hexdigest()}  # fmt: skip
        seeding: list[BuildProgress] = []
        with git_build(commit, patches=[patch], progress=seeding.append) as seeded:
            sprov = seeded.provenance
            assert sprov["build_mode"] == f"incremental from {commit}", sprov
            assert sprov["build_tree_seed"] == prov["build_tree"]
            assert sprov["build_tree"] != prov["build_tree"]
            assert any("not run again" in u.line for u in seeding), seeding
            assert sprov["ccache"]["hits"] + sprov["ccache"]["misses"] < 5, sprov["ccache"]
            patched_facts = install_facts(seeded)
        assert "(moved tree, patched)" in patched_facts["version()"]
        differ = {f for f in incremental["files"] if patched_facts["files"].get(f) !=
                  incremental["files"][f]}  # fmt: skip
        assert differ == {"bin/postgres"}, differ
        # pg_config names each install's own directories; the rest is the same.
        assert relative(patched_facts["pg_config"], seeded) == relative(
            incremental["pg_config"], moved
        )
        assert sprov["build_seconds"] < prov["build_seconds"], (sprov, prov)
        # The same commit again, after its install was evicted and with an object in the tree
        # that no longer links: the incremental attempt fails at make and is retried clean.
        shutil.rmtree(moved.provenance["install_dir"])
        garbage = Path(prov["build_tree"]) / "src" / "src/backend/utils/adt/version.o"
        garbage.write_bytes(b"not an object file")
        updates: list[BuildProgress] = []
        with git_build(commit, progress=updates.append) as again:
            assert again.provenance["build_mode"] == "clean"
            assert any("building" in u.line and "clean" in u.line for u in updates), updates
            assert install_facts(again) == incremental
    finally:
        shutil.rmtree(root, ignore_errors=True)


def relative(pg_config: dict[str, str], built: Any) -> dict[str, str]:
    """``pg_config`` with the install's directory written as <prefix>."""
    prefix = built.provenance["install_dir"]
    return {k: v.replace(prefix, "<prefix>") for k, v in pg_config.items()}


def server_version(installation: Installation) -> str:
    workdir = open_tmpdir("benchhub-cluster-")
    cluster = Cluster(installation=installation, client_bindir=installation.bindir,
                      workdir=workdir, port=free_port())  # fmt: skip
    try:
        with cluster:
            return cluster.sql("SELECT version()").strip()
    finally:
        cluster.stop(mode="immediate")
        shutil.rmtree(workdir, ignore_errors=True)


def install_facts(built: Any) -> dict[str, Any]:
    """What an install is: every file's sha256 (not the build's own log and records), its
    pg_config and its server's answer to SELECT version()."""
    prefix = Path(built.provenance["install_dir"])
    own = {"build.log", "provenance.json", MARKER, ".benchhub-used"}
    files = {}
    for path in sorted(prefix.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in own:
            files[str(path.relative_to(prefix))] = sha256_of(path)
    pg_config = {k: v for k, v in built.provenance["pg_config"].items()}
    return {"files": files, "pg_config": pg_config,
            "version()": server_version(built.installation)}  # fmt: skip
