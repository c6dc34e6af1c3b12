"""Resolving build sources to exact inputs: git refs and dates against a real local repository
made from the 15.18 tarball, releases and tarballs from a real local HTTP mirror."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchhub.testing.spellings import PRIVATE_SPELLINGS, RecordingServer, recording_server
from build_helpers import commit_file, git, http_server, release_mirror, repo_from_tarball
from conftest import PG15_SHA256, open_tmpdir

from benchhub_runner.build import BuildError, BuildSettings, commit_range, resolve_source
from benchhub_runner.build.sources import SourceCache
from benchhub_runner.build.spec import GitSource, ReleaseSource, TarballSource
from benchhub_runner.sandbox.account import RUNNER_USER
from benchhub_runner.servers.cluster import free_port

# Enough of the tree to be a PostgreSQL source; the whole tree is for the slow build tests.
MEMBERS = ["configure", "configure.ac", "README", "COPYRIGHT"]


@pytest.fixture(scope="module")
def origin(pg15_tarball: Path) -> Iterator[dict[str, object]]:
    """alice's repository: the 15.18 tree tagged REL_15_18, then commits on master and on a
    feature branch at chosen times (one late on 1 May in UTC-2, which is 2 May in UTC)."""
    root = open_tmpdir("benchhub-origin-")
    repo = root / "postgresql"
    base = repo_from_tarball(repo, pg15_tarball, members=MEMBERS)
    second = commit_file(repo, "NOTES", "one\n", date="2021-05-01T10:00:00Z", message="second")
    git(repo, "checkout", "-q", "-b", "feature")
    feature = commit_file(repo, "NOTES", "f\n", date="2021-05-01T20:00:00Z", message="feature")
    git(repo, "checkout", "-q", "master")
    third = commit_file(repo, "NOTES", "two\n", date="2021-05-01T23:30:00-02:00", message="3rd")
    yield {
        "repo": repo, "base": base, "second": second, "feature": feature, "third": third,
        "listed": (root,),
    }  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def cache_dir() -> Iterator[Path]:
    path = open_tmpdir("benchhub-build-cache-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def resolve(source: object, cache_dir: Path, **settings: object) -> object:
    return resolve_source(source, cache_dir=cache_dir, settings=BuildSettings(**settings))  # type: ignore[arg-type]


# --- git -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("second", "second"), ("REL_15_18", "base"), ("feature", "feature"), ("master", "third")],
)
def test_it_resolves_commits_tags_and_branches(origin, cache_dir, ref, expected) -> None:
    # "second" is given as master@<short sha>, the way users name a commit.
    name = origin[ref][:9] if ref == "second" else ref
    resolved = resolve(
        GitSource(url=str(origin["repo"]), ref=name), cache_dir, source_dirs=origin["listed"]
    )
    assert resolved.commit == origin[expected]
    assert resolved.digest == f"commit:{origin[expected]}"
    assert resolved.repository == str(origin["repo"])


def test_it_records_the_commit_date_in_utc_and_the_subject(origin, cache_dir) -> None:
    source = GitSource(url=str(origin["repo"]), ref="master")
    resolved = resolve(source, cache_dir, source_dirs=origin["listed"])
    assert resolved.commit_date == "2021-05-02T01:30:00Z"
    assert resolved.subject == "3rd"


@pytest.mark.parametrize(
    ("day", "expected"),
    [("2021-05-01", "second"), ("2021-05-02", "third"), ("2021-04-30", "base")],
)
def test_it_takes_the_last_commit_of_a_branch_by_the_end_of_a_day(
    origin, cache_dir, day, expected
) -> None:
    source = GitSource(url=str(origin["repo"]), branch="master", date=dt.date.fromisoformat(day))
    resolved = resolve(source, cache_dir, source_dirs=origin["listed"])
    assert resolved.commit == origin[expected]
    assert resolved.ref == f"master@{day}"


def test_it_explains_refs_and_dates_it_cannot_resolve(origin, cache_dir) -> None:
    url = str(origin["repo"])
    cases = [
        (GitSource(url=url, ref="deadbeef"), "'deadbeef' is not a commit, tag or branch"),
        (GitSource(url=url, branch="master", date=dt.date(2021, 4, 29)), "no commit on or before"),
        (GitSource(url=url, branch="nope", date=dt.date(2021, 5, 1)), "no branch 'nope'"),
    ]
    for source, words in cases:
        with pytest.raises(BuildError) as caught:
            resolve(source, cache_dir, source_dirs=origin["listed"])
        assert caught.value.stage == "resolve"
        assert words in str(caught.value)


def test_it_keeps_one_mirror_and_fetches_only_what_moved(origin, cache_dir, tmp_path) -> None:
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(origin["repo"]), str(upstream))
    url = str(upstream)
    first = resolve(GitSource(url=url, ref="master"), cache_dir, source_dirs=(tmp_path,))
    mirror = SourceCache(cache_dir / "builds" / "sources", release_url="").mirror_path(url)
    inode = (mirror / "objects").stat().st_ino
    newer = commit_file(upstream, "NOTES", "new\n", date="2021-05-03T08:00:00Z", message="new")
    # A branch moves: resolving it again fetches the new commit into the same mirror.
    assert (
        resolve(GitSource(url=url, ref="master"), cache_dir, source_dirs=(tmp_path,)).commit
        == newer
    )
    assert (mirror / "objects").stat().st_ino == inode
    # A commit the mirror has resolves without the repository (it is gone now).
    shutil.rmtree(upstream)
    assert (
        resolve(GitSource(url=url, ref=first.commit), cache_dir, source_dirs=(tmp_path,)).commit
        == first.commit
    )
    with pytest.raises(BuildError) as caught:
        resolve(GitSource(url=url, ref="master"), cache_dir, source_dirs=(tmp_path,))
    assert caught.value.stage == "fetch"


@pytest.fixture(scope="module")
def host_repos(pg15_tarball: Path) -> Iterator[dict[str, Path]]:
    """A directory the host owner lists, holding a repository and a link to one outside it, and
    a repository of the host's beside it (not listed)."""
    root = open_tmpdir("benchhub-host-repos-")
    listed = root / "listed"
    listed.mkdir()
    inside = listed / "postgresql"
    outside = root / "private"
    for repo in (inside, outside):
        repo_from_tarball(repo, pg15_tarball, members=["README"])
    (listed / "escape").symlink_to(outside)
    yield {"listed": listed, "inside": inside, "outside": outside}
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name", ["path", "file-url", "link", "dotdot", "bare-git-dir"])
def test_it_clones_a_local_repository_only_under_the_directories_the_host_lists(
    host_repos, name
) -> None:
    listed, outside = host_repos["listed"], host_repos["outside"]
    url = {
        "path": str(outside),
        "file-url": f"file://{outside}",
        "link": str(listed / "escape"),
        "dotdot": f"{listed}/../private",
        "bare-git-dir": f"file://{outside}/.git",
    }[name]
    cache = open_tmpdir("benchhub-git-")
    try:
        for source in (GitSource(url=url, ref="master"),
                       GitSource(url=url, branch="master", date=dt.date(2030, 1, 1))):  # fmt: skip
            with pytest.raises(BuildError) as caught:
                resolve(source, cache, source_dirs=(listed,))
            assert caught.value.stage == "fetch"
            assert str(caught.value).endswith(
                f"source.url {url} is not under a directory this agent takes sources from "
                f"([build] source_dirs in its configuration: {listed})"
            )
        # The bisection's listing is refused the same way, and nothing was cloned.
        with pytest.raises(BuildError, match="not under a directory this agent takes sources"):
            commit_range(url, "master", "master", cache_dir=cache,
                         settings=BuildSettings(source_dirs=(listed,)))  # fmt: skip
        assert not list((cache / "builds" / "sources" / "git").iterdir())
        assert "cloning" not in caught.value.log_tail
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.mark.parametrize("form", ["path", "file-url"])
def test_it_clones_a_repository_under_a_listed_directory(host_repos, form) -> None:
    inside = host_repos["inside"]
    url = str(inside) if form == "path" else f"file://{inside}"
    cache = open_tmpdir("benchhub-git-")
    try:
        with pytest.raises(BuildError, match=r"source_dirs in its configuration: none"):
            resolve(GitSource(url=url, ref="master"), cache)
        resolved = resolve(GitSource(url=url, ref="master"), cache, source_dirs=(inside.parent,))
        assert resolved.commit == git(inside, "rev-parse", "HEAD")
        mirror = SourceCache(cache / "builds" / "sources", release_url="").mirror_path(url)
        assert git(mirror, "rev-parse", "refs/heads/master") == resolved.commit
        # Copied through the pack protocol: no object file is shared with the repository.
        source_objects = {p.stat().st_ino for p in (inside / ".git" / "objects").rglob("*")}
        assert not {p.stat().st_ino for p in (mirror / "objects").rglob("*")} & source_objects
        # No longer listed: the mirror is not used, nor fetched into.
        with pytest.raises(BuildError, match="not under a directory this agent takes sources"):
            resolve(GitSource(url=url, ref=resolved.commit), cache, source_dirs=(cache,))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_it_refuses_a_listed_repository_that_leads_git_outside_the_list(host_repos) -> None:
    """A listed directory whose .git links out, a path that is no repository beside a link out
    named as git would also try it (<path>.git), and a repository that borrows objects from one
    outside (alternates): all refused before git runs."""
    listed, outside = host_repos["listed"], host_repos["outside"]
    linked = listed / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(outside / ".git")
    (listed / "suffixed.git").symlink_to(outside / ".git")
    borrower = listed / "borrower.git"
    git(listed, "clone", "-q", "--bare", "--shared", str(outside), str(borrower))
    cache = open_tmpdir("benchhub-git-")
    try:
        with pytest.raises(
            BuildError, match=re.escape(f"source.url {linked} is not under a directory")
        ):
            resolve(GitSource(url=str(linked), ref="master"), cache, source_dirs=(listed,))
        suffixed = f"{listed}/suffixed"
        with pytest.raises(BuildError, match=re.escape(f"source.url {suffixed} is not a git")):
            resolve(GitSource(url=suffixed, ref="master"), cache, source_dirs=(listed,))
        with pytest.raises(BuildError, match="borrows objects from another repository"):
            resolve(GitSource(url=str(borrower), ref="master"), cache, source_dirs=(listed,))
        assert not list((cache / "builds" / "sources" / "git").iterdir())
    finally:
        shutil.rmtree(linked, ignore_errors=True)
        (listed / "suffixed.git").unlink()
        shutil.rmtree(borrower, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


# --- releases and tarballs -------------------------------------------------------------------


@pytest.fixture(scope="module")
def mirror(pg15_tarball: Path) -> Iterator[dict[str, object]]:
    root = open_tmpdir("benchhub-mirror-")
    pub = release_mirror(root, pg15_tarball)
    # 15.17 is published with a digest that does not match its tarball.
    tampered = release_mirror(root / "bad", pg15_tarball, version="15.17")
    (tampered / "v15.17" / "postgresql-15.17.tar.bz2.sha256").write_text("0" * 64 + "\n")
    shutil.copytree(tampered / "v15.17", pub / "v15.17")
    with http_server(root) as url:
        yield {"url": f"{url}/pub/source", "root": root}
    shutil.rmtree(root, ignore_errors=True)


def test_it_resolves_a_release_to_its_published_tarball(mirror, tmp_path) -> None:
    cache = open_tmpdir("benchhub-release-")
    try:
        resolved = resolve(ReleaseSource(version="15.18"), cache, release_url=mirror["url"])
        assert resolved.tarball_sha256 == PG15_SHA256
        assert resolved.digest == f"tarball:{PG15_SHA256}"
        assert resolved.location == f"{mirror['url']}/v15.18/postgresql-15.18.tar.bz2"
        assert resolved.tarball.read_bytes()[:3] == b"BZh"
        # Known now: the same release resolves with the mirror unreachable.
        again = resolve(ReleaseSource(version="15.18"), cache, release_url="http://127.0.0.1:9")
        assert (again.digest, again.tarball) == (resolved.digest, resolved.tarball)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_it_refuses_a_release_whose_published_digest_does_not_match(mirror, cache_dir) -> None:
    with pytest.raises(BuildError) as caught:
        resolve(ReleaseSource(version="15.17"), cache_dir, release_url=mirror["url"])
    assert caught.value.stage == "fetch"
    assert f"is {PG15_SHA256}, expected {'0' * 64}" in str(caught.value)
    leftovers = list((cache_dir / "builds" / "sources" / "tarballs").iterdir())
    assert not [p for p in leftovers if p.name.startswith("0000")]


def test_it_says_when_the_mirror_has_no_such_release(mirror, cache_dir) -> None:
    with pytest.raises(BuildError) as caught:
        resolve(ReleaseSource(version="15.99"), cache_dir, release_url=mirror["url"])
    assert caught.value.stage == "resolve"
    assert "HTTP 404" in str(caught.value)


def test_it_takes_tarballs_by_url_or_path_and_checks_them(mirror, pg15_tarball) -> None:
    url = f"{mirror['url']}/v15.18/postgresql-15.18.tar.bz2"
    allowed = (pg15_tarball.parent,)
    for source in (TarballSource(sha256=PG15_SHA256, url=url),
                   TarballSource(sha256=PG15_SHA256, path=str(pg15_tarball))):  # fmt: skip
        cache = open_tmpdir("benchhub-tarball-")
        try:
            # The mirror is on 127.0.0.1: this agent's owner allows private sources.
            resolved = resolve(source, cache, source_dirs=allowed, allow_private_sources=True)
            assert resolved.digest == f"tarball:{PG15_SHA256}"
            assert resolved.location == (source.url or source.path)
            assert os.path.getsize(resolved.tarball) == os.path.getsize(pg15_tarball)
            # Owner-only, owned by the user that unpacks it.
            assert stat.S_IMODE(os.stat(resolved.tarball).st_mode) == 0o600
            assert os.stat(resolved.tarball).st_uid == pwd.getpwnam(RUNNER_USER).pw_uid
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    wrong = TarballSource(sha256="1" * 64, path=str(pg15_tarball))
    with pytest.raises(BuildError, match="does not have the sha256 the source gives") as caught:
        resolve(wrong, open_tmpdir("benchhub-tarball-"), source_dirs=allowed)
    assert caught.value.stage == "fetch"
    assert PG15_SHA256 not in str(caught.value) and PG15_SHA256 not in caught.value.log_tail


@pytest.fixture(scope="module")
def recorder() -> Iterator[RecordingServer]:
    root = open_tmpdir("benchhub-recorder-")
    with recording_server(root) as server:
        yield server
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("host", PRIVATE_SPELLINGS)
def test_it_fetches_no_tarball_from_a_private_address_unless_the_host_allows_it(recorder, host):
    url = f"http://{host}:{recorder.port}/pub/source/v15.18/postgresql-15.18.tar.bz2"
    cache = open_tmpdir("benchhub-tarball-")
    try:
        with pytest.raises(BuildError) as caught:
            resolve(TarballSource(sha256=PG15_SHA256, url=url), cache)
        assert caught.value.stage == "fetch"
        assert "not a public address" in str(caught.value)
        assert "[build] allow_private_sources allows private ones" in str(caught.value)
        assert not list((cache / "builds" / "sources" / "tarballs").iterdir())
        assert recorder.requests() == []
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.mark.parametrize("scheme", ["git", "http", "https"])
@pytest.mark.parametrize("host", PRIVATE_SPELLINGS)
def test_it_clones_from_no_private_address_in_any_spelling(recorder, host, scheme) -> None:
    # The server listens on every local address: git (or curl under it) connecting to any of
    # these spellings would be logged.
    url = f"{scheme}://{host}:{recorder.port}/pg.git"
    cache = open_tmpdir("benchhub-git-")
    try:
        with pytest.raises(BuildError, match=r"not a public address") as caught:
            resolve(GitSource(url=url, ref="master"), cache)
        assert caught.value.stage == "fetch"
        with pytest.raises(BuildError, match=r"not a public address"):
            commit_range(url, "master", "master", cache_dir=cache)
        assert recorder.requests() == []
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_the_recorder_hears_a_fetch_the_host_allows(recorder) -> None:
    # The other half of the tests above: the same server logs a connection when one is made.
    url = f"git://127.0.0.1:{recorder.port}/pg.git"
    cache = open_tmpdir("benchhub-git-")
    try:
        with pytest.raises(BuildError):
            resolve(GitSource(url=url, ref="master"), cache, allow_private_sources=True)
        assert recorder.requests() != []
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        recorder.log.write_text("")


@pytest.fixture(scope="module")
def git_daemon(origin) -> Iterator[str]:
    """alice's repository served by git daemon on 127.0.0.1 (git://)."""
    port = free_port()
    root = origin["repo"].parent
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={root}",
         "--listen=127.0.0.1", f"--port={port}", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and daemon.poll() is None, "no git daemon"
                time.sleep(0.1)
        yield f"git://127.0.0.1:{port}/{origin['repo'].name}"
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def test_it_clones_no_repository_from_a_private_address_unless_the_host_allows_it(
    origin, git_daemon
) -> None:
    cache = open_tmpdir("benchhub-git-")
    try:
        by_date = GitSource(url=git_daemon, branch="master", date=dt.date(2030, 1, 1))
        for source in (GitSource(url=git_daemon, ref="master"), by_date):
            with pytest.raises(BuildError, match=r"allow_private_sources allows") as caught:
                resolve(source, cache)
            assert caught.value.stage == "fetch"
        with pytest.raises(BuildError, match=r"allow_private_sources allows"):
            commit_range(git_daemon, "master", "master", cache_dir=cache)
        assert not list((cache / "builds" / "sources" / "git").iterdir())
        # Allowed: cloned over git:// from the address that was checked.
        resolved = resolve(GitSource(url=git_daemon, ref="master"), cache,
                           allow_private_sources=True)  # fmt: skip
        assert resolved.commit == origin["third"]
        assert resolved.repository == git_daemon
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture
def host_files() -> Iterator[dict[str, Path]]:
    """A directory the host owner lists, holding a tarball, a secret only root may read and a
    link out of the directory, and a secret beside it."""
    root = open_tmpdir("benchhub-host-files-")
    listed = root / "tarballs"
    listed.mkdir(mode=0o755)
    secret = root / "token"
    secret.write_text("bhr_the-agents-token\n")
    private = listed / "private.tar.bz2"
    private.write_text("root only\n")
    private.chmod(0o600)
    (listed / "escape.tar.bz2").symlink_to(secret)
    yield {"listed": listed, "secret": secret, "private": private}
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name", ["secret", "escape", "dotdot"])
def test_it_reads_a_path_source_only_under_the_directories_the_host_lists(host_files, name):
    listed, secret = host_files["listed"], host_files["secret"]
    path = {
        "secret": secret,
        "escape": listed / "escape.tar.bz2",
        "dotdot": Path(f"{listed}/../token"),
    }[name]
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    cache = open_tmpdir("benchhub-tarball-")
    try:
        with pytest.raises(BuildError, match="not under a directory this agent takes") as caught:
            resolve(TarballSource(sha256=digest, path=str(path)), cache, source_dirs=(listed,))
        assert caught.value.stage == "fetch"
        assert not list((cache / "builds" / "sources" / "tarballs").iterdir())
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_it_reads_a_listed_path_as_the_build_user_and_says_nothing_of_its_contents(host_files):
    private = host_files["private"]
    digest = hashlib.sha256(private.read_bytes()).hexdigest()
    cache = open_tmpdir("benchhub-tarball-")
    try:
        source = TarballSource(sha256="2" * 64, path=str(private))
        with pytest.raises(BuildError, match=f"cannot read {private} as user {RUNNER_USER}"):
            resolve(source, cache, source_dirs=(host_files["listed"],))
        private.chmod(0o644)
        with pytest.raises(BuildError) as caught:
            resolve(source, cache, source_dirs=(host_files["listed"],))
        assert digest not in str(caught.value) and digest not in caught.value.log_tail
        assert "root only" not in caught.value.log_tail
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_it_takes_no_path_source_when_the_host_lists_no_directory(pg15_tarball) -> None:
    cache = open_tmpdir("benchhub-tarball-")
    try:
        with pytest.raises(BuildError, match=r"source_dirs in its configuration: none"):
            resolve(TarballSource(sha256=PG15_SHA256, path=str(pg15_tarball)), cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


# --- a bisection's range ---------------------------------------------------------------------


def listing(made: dict[str, str | Path]) -> BuildSettings:
    """Settings whose source_dirs hold the range's repository."""
    return BuildSettings(source_dirs=(Path(made["root"]),))


@pytest.fixture(scope="module")
def merged(pg15_tarball: Path) -> Iterator[dict[str, str | Path]]:
    """master: base <- a1 <- a2 <- merge(a2, b1) <- a3, with b1 on a branch off base."""
    root = open_tmpdir("benchhub-range-")
    repo = root / "postgresql"
    made: dict[str, str | Path] = {"repo": repo}
    made["base"] = repo_from_tarball(repo, pg15_tarball, members=MEMBERS)
    made["a1"] = commit_file(repo, "NOTES", "1\n", date="2021-05-01T10:00:00Z", message="a one")
    git(repo, "checkout", "-q", "-b", "side", str(made["base"]))
    made["b1"] = commit_file(repo, "SIDE", "b\n", date="2021-05-01T11:00:00Z", message="b one")
    git(repo, "checkout", "-q", "master")
    made["a2"] = commit_file(repo, "NOTES", "2\n", date="2021-05-01T12:00:00Z", message="a two")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", date="2021-05-01T13:00:00Z")
    made["merge"] = git(repo, "rev-parse", "HEAD")
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    made["a3"] = commit_file(repo, "NOTES", "3\n", date="2021-05-01T14:00:00-02:00", message="a3")
    made["root"] = root
    yield made
    shutil.rmtree(root, ignore_errors=True)


def test_it_lists_a_range_with_merged_branches_newest_first(merged, cache_dir) -> None:
    found = commit_range(
        str(merged["repo"]), "REL_15_18", "master", cache_dir=cache_dir, settings=listing(merged)
    )
    assert (found.good, found.bad) == (merged["base"], merged["a3"])
    commits = found.commits
    shas = [c.sha for c in commits]
    assert set(shas) == {merged[k] for k in ("a1", "b1", "a2", "merge", "a3")}
    assert shas[0] == merged["a3"]
    # Topological: every commit comes before its parents.
    for i, commit in enumerate(commits):
        assert all(shas.index(p) > i for p in commit.parents if p in shas)
    by_sha = {c.sha: c for c in commits}
    assert by_sha[merged["merge"]].parents == (merged["a2"], merged["b1"])
    assert by_sha[merged["a1"]].parents == (merged["base"],)
    last = by_sha[merged["a3"]]
    assert (last.subject, last.author, last.date) == (
        "a3",
        "alice <alice@example.org>",
        "2021-05-01T16:00:00Z",
    )
    assert last.files == ("NOTES", "README") and last.files_total == 2


def test_a_range_takes_short_shas_and_refuses_a_reversed_one(merged, cache_dir) -> None:
    found = commit_range(
        str(merged["repo"]),
        str(merged["a2"])[:9],
        str(merged["merge"]),
        cache_dir=cache_dir,
        settings=listing(merged),
    )
    assert found.good == merged["a2"]
    assert [c.sha for c in found.commits] == [merged["merge"], merged["b1"]]
    with pytest.raises(BuildError, match="must be an ancestor"):
        commit_range(
            str(merged["repo"]),
            "master",
            "REL_15_18",
            cache_dir=cache_dir,
            settings=listing(merged),
        )
    with pytest.raises(BuildError, match="not a commit, tag or branch"):
        commit_range(
            str(merged["repo"]), "REL_15_18", "no-such-branch", cache_dir=cache_dir,
            settings=listing(merged),
        )  # fmt: skip
