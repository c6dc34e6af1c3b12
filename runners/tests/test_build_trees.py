"""Kept build trees of git sources: when a tree is trusted, what makes configure run again,
and which files a move from one commit to another replaces (against a real git repository)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from build_helpers import commit_file, git, repo_from_tarball
from conftest import open_tmpdir

from benchhub_runner.build import BuildError
from benchhub_runner.build.sources import SourceCache
from benchhub_runner.build.spec import GitSource
from benchhub_runner.build.steps import Steps, clean_env
from benchhub_runner.build.trees import (
    BuildTree,
    configure_input,
    find_seeds,
    patch_paths,
    prune_trees,
)

PREFIX = Path("/nonexistent/tree-prefix")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("configure", True),
        ("configure.ac", True),
        ("config/c-compiler.m4", True),
        ("src/Makefile.global.in", True),
        ("src/include/pg_config.h.in", True),
        ("src/template/linux", True),
        ("src/makefiles/Makefile.linux", True),
        ("src/backend/utils/adt/version.c", False),
        ("src/include/access/xact.h", False),
        ("src/backend/Makefile", False),
        ("doc/src/sgml/config.sgml", False),
    ],
)
def test_configure_runs_again_only_when_its_inputs_change(path: str, expected: bool) -> None:
    assert configure_input(path) is expected


def test_a_tree_is_trusted_only_after_its_build_finished(tmp_path: Path) -> None:
    tree = BuildTree(tmp_path / "trees" / "k", prefix=PREFIX)
    assert tree.commit() is None and not tree.interrupted()
    tree.begin()
    tree.src.mkdir()
    assert tree.interrupted() and tree.commit() is None
    tree.done(commit="a" * 40, configure_args=["--prefix=/p", "--enable-depend"])
    assert not tree.interrupted()
    assert tree.commit() == "a" * 40
    assert tree.configure_args() == ["--prefix=/p", "--enable-depend"]
    # The next build starts: until it is done, nothing of the old state is trusted.
    tree.begin()
    assert tree.commit() is None and tree.configure_args() is None
    tree.discard()
    assert not tree.root.exists()


def test_a_tree_without_its_source_is_not_trusted(tmp_path: Path) -> None:
    tree = BuildTree(tmp_path / "t", prefix=PREFIX)
    tree.begin()
    tree.done(commit="b" * 40, configure_args=[])
    assert tree.commit() is None


def test_the_files_a_patch_touches_are_read_from_its_headers() -> None:
    text = (
        "From: alice\n\n--- a/configure.ac\t2021-05-01 10:00:00\n+++ b/configure.ac\n@@ -1 +1 @@\n"
        "-x\n+y\n--- /dev/null\n+++ b/src/backend/new.c\n@@ -0,0 +1 @@\n+int z;\n"
    )
    assert patch_paths(text) == ["configure.ac", "configure.ac", "src/backend/new.c"]
    assert any(configure_input(p) for p in patch_paths(text))


def finished(root: Path, *, seed_key: str | None, mtime: int) -> BuildTree:
    tree = BuildTree(root, prefix=PREFIX)
    tree.begin()
    tree.src.mkdir()
    tree.done(commit="c" * 40, configure_args=["--prefix=/p"], seed_key=seed_key,
              repository="https://example.org/postgresql.git")  # fmt: skip
    os.utime(root, (mtime, mtime))
    return tree


def test_a_new_tree_is_seeded_by_a_finished_tree_without_patches_of_its_configuration(
    tmp_path: Path,
) -> None:
    trees = tmp_path / "trees"
    finished(trees / "other-config", seed_key="k2", mtime=3000)
    finished(trees / "patched", seed_key=None, mtime=2500)
    older = finished(trees / "same-config-old", seed_key="k1", mtime=1000)
    newer = finished(trees / "same-config-new", seed_key="k1", mtime=2000)
    assert older.repository() == "https://example.org/postgresql.git"

    def roots(**kwargs: Path) -> list[str]:
        return [t.root.name for t in find_seeds(trees, seed_key="k1", prefix=PREFIX, **kwargs)]

    assert roots() == ["same-config-new", "same-config-old"]
    # The same repository's tree comes first, however old.
    assert roots(prefer=older.root) == ["same-config-old", "same-config-new"]
    assert find_seeds(trees, seed_key="k3", prefix=PREFIX) == []
    # A tree whose build is under way (or was interrupted) seeds nothing.
    newer.begin()
    assert roots() == ["same-config-old"]
    assert find_seeds(tmp_path / "none", seed_key="k1", prefix=PREFIX) == []


def test_trees_beyond_the_limit_go_least_recently_used_first(tmp_path: Path) -> None:
    trees = tmp_path / "trees"
    made = []
    for i in range(4):
        path = trees / f"t{i}"
        path.mkdir(parents=True)
        made.append(path)
    for i, path in enumerate(made):
        os.utime(path, (1000 + i, 1000 + i))
    prune_trees(trees, keep={made[0]}, max_trees=2)
    assert sorted(p.name for p in trees.iterdir()) == ["t0", "t3"]


@pytest.fixture(scope="module")
def origin(pg15_tarball: Path) -> Iterator[dict[str, object]]:
    root = open_tmpdir("benchhub-origin-")
    repo = root / "postgresql"
    base = repo_from_tarball(repo, pg15_tarball, members=["configure", "README", "COPYRIGHT"])
    changed = commit_file(repo, "README", "moved\n", date="2021-05-01T10:00:00Z", message="a")
    git(repo, "rm", "-q", "COPYRIGHT")
    (repo / "src").mkdir()
    (repo / "src" / "new file.c").write_text("int x;\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "b", date="2021-05-02T10:00:00Z")
    last = git(repo, "rev-parse", "HEAD")
    yield {"repo": repo, "base": base, "changed": changed, "last": last, "root": root}
    shutil.rmtree(root, ignore_errors=True)


def test_a_move_lists_the_files_changed_and_removed_between_two_commits(
    origin: dict[str, object], tmp_path: Path
) -> None:
    cache = SourceCache(
        tmp_path / "sources", release_url="http://127.0.0.1:9", source_dirs=(Path(origin["root"]),)
    )
    env = clean_env(home=tmp_path, extra={"GIT_ALLOW_PROTOCOL": "file"})
    steps = Steps(log_path=tmp_path / "log", account=None, env=env, progress=None, stop=None)
    url = str(origin["repo"])
    cache.resolve(GitSource(url=url, ref="master"), steps)
    base, changed, last = origin["base"], origin["changed"], origin["last"]
    assert cache.changes(url, str(base), str(changed), steps) == (["README"], [])
    assert cache.changes(url, str(changed), str(last), steps) == (["src/new file.c"],
                                                                  ["COPYRIGHT"])  # fmt: skip
    assert cache.changes(url, str(last), str(last), steps) == ([], [])
    assert cache.has_commits(url, [str(base), str(last)], steps)
    assert not cache.has_commits(url, [str(base), "0" * 40], steps)
    assert not cache.has_commits("https://example.org/elsewhere.git", [str(base)], steps)
    with pytest.raises(BuildError) as caught:
        cache.changes(url, "0" * 40, str(last), steps)
    assert caught.value.stage == "unpack"
