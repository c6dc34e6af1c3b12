"""The claim -> build wiring of the agent: a claimed job's recipe versions come with build
specs, which the agent checks at the claim and builds at provisioning (stage "build").

Against a real local HTTP server standing in for BenchHub, with the real builder on Debian's
copy of the PostgreSQL 15.18 tarball. The patch that does not apply fails before anything is
compiled; unpacking the tarball is what takes the time (slow: 1 to 2 minutes on the shared VM).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from build_helpers import stale_patch
from conftest import PG15_SHA256, open_tmpdir
from test_agent_plumbing import FakeServer, client_for

from benchhub_runner.agent.loop import Agent
from benchhub_runner.build.settings import BuildSettings
from benchhub_runner.config import Config
from benchhub_runner.jobspec.spec import JobSpecError, job_parse
from benchhub_runner.sandbox.account import RUNNER_USER

TOKEN = "bhr_12345678_secret"


def claim(builds: dict[str, Any], versions: list[str]) -> dict[str, Any]:
    return {
        "id": 11,
        "attempt": 1,
        "versions": versions,
        "workload": {"name": "so", "builtin": "select-only"},
        "clients": [1],
        "repeats": 1,
        "duration_s": 2,
        "claimed_host": "bench-01",
        "builds": builds,
    }


def tarball_spec(name: str, tarball: Path, patches: list[dict[str, str]]) -> dict[str, Any]:
    source = {"kind": "tarball", "path": str(tarball), "sha256": PG15_SHA256}
    return {"name": name, "source": source, "patches": patches}


def patch(name: str, text: str) -> dict[str, str]:
    return {"name": name, "sha256": hashlib.sha256(text.encode()).hexdigest(), "text": text}


def agent_once(server: FakeServer, work_dir: Path, *, source_dirs: tuple[Path, ...],
               **config: Any) -> str:  # fmt: skip
    """One claim of a real agent against ``server``, building without ccache and taking
    tarballs from ``source_dirs`` only; its outcome."""
    settings = BuildSettings(ccache="off", source_dirs=source_dirs)
    config.setdefault("heartbeat_interval_s", 0.2)
    agent_config = Config(server=server.url, token=TOKEN, host="bench-01", work_dir=work_dir,
                          build=settings, **config)  # fmt: skip
    return Agent(config=agent_config, client=client_for(server.url)).once()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


@pytest.fixture
def work_dir() -> Iterator[Path]:
    path = open_tmpdir("benchhub-agent-build-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_claim_carries_each_recipe_versions_spec(pg15_tarball: Path) -> None:
    spec = tarball_spec("15.18+x", pg15_tarball, [patch("x.patch", "--- a/x\n+++ b/x\n")])

    job = job_parse(claim({"15.18+x": spec}, ["14", "15.18+x"]))

    assert set(job.builds) == {"15.18+x"}
    built = job.builds["15.18+x"]
    assert built.source.sha256 == PG15_SHA256 and built.patches[0].name == "x.patch"


@pytest.mark.parametrize(
    ("builds", "field"),
    [
        ({"15.18+y": {"name": "15.18+y", "source": {"kind": "release", "version": "15.18"}}},
         "builds.15.18+y"),
        ({"15.18+x": {"name": "15.18+x", "source": {"kind": "tarball", "path": "/x",
                                                      "sha256": "abc"}}},
         "builds.15.18+x.source.sha256"),
        ({"15.18+x": {"name": "15.18+x", "source": {"kind": "release", "version": "15.18"},
                      "configure_flags": ["--prefix=/usr"]}},
         "builds.15.18+x.configure_flags[0]"),
    ],
)  # fmt: skip
def test_a_build_spec_the_agent_cannot_use_fails_the_claim_naming_it(builds, field) -> None:
    with pytest.raises(JobSpecError) as caught:
        job_parse(claim(builds, ["15.18+x"]))
    assert caught.value.field == field and caught.value.job_id == 11


@pytest.mark.slow
def test_a_patch_that_does_not_apply_fails_the_job_at_build_with_the_hunk(
    server: FakeServer, work_dir: Path, pg15_tarball: Path, client_bindir: Path
) -> None:
    text = stale_patch(pg15_tarball)
    spec = tarball_spec("15.18+stale", pg15_tarball, [patch("stale.patch", text)])
    server.replies = [(200, claim({"15.18+stale": spec}, ["15.18+stale"]))]
    outcome = agent_once(server, work_dir, source_dirs=(pg15_tarball.parent,),
                         client_bindir=client_bindir)  # fmt: skip

    assert outcome == "failed"
    paths = [path for path, _, _ in server.requests]
    assert paths[0] == "/api/v1/jobs/claim/" and paths[-1] == "/api/v1/jobs/11/finish/"
    finish = server.requests[-1][2]
    assert finish is not None and (finish["outcome"], finish["stage"]) == ("failed", "build")
    message = finish["message"]
    assert message.startswith("15.18+stale: build failed at patch: stale.patch does not apply")
    # The rejected hunk itself, and the log's tail.
    assert "+static void CommitTransactionRenamed(void);" in message
    assert "FAILED" in message and "last lines of the build log" in message
    beats = [body for path, _, body in server.requests if path.endswith("/heartbeat/")]
    stages = [b["progress"].get("stage") for b in beats if b]
    assert "build" in stages, stages
    build_stages = {b["progress"].get("build_stage") for b in beats if b}
    assert build_stages & {"fetch", "unpack", "patch"}, build_stages
    # Nothing was installed and no run was uploaded.
    assert not any(path == "/api/v1/runs/" for path in paths)
    assert not list((work_dir / "cache" / "builds" / "installs").glob("*/bin/postgres"))


def test_a_tarballs_configure_cannot_read_the_agents_token_into_the_failure(
    server: FakeServer, work_dir: Path
) -> None:
    """A recipe's tarball whose configure prints the agent's token file into the build log,
    whose tail the job's failure publishes: configure runs as the build user, who cannot read
    the token file (the agent refuses one others may read), so only the refusal is published.
    Nothing is compiled: the configure fails at once."""
    token_file = work_dir / "token"
    token_file.write_text(f"{TOKEN}\n")
    token_file.chmod(0o600)
    listed = open_tmpdir("benchhub-tarballs-")
    tree = listed / "postgresql-15.99"
    tree.mkdir()
    configure = tree / "configure"
    configure.write_text(
        f"#!/bin/sh\nPACKAGE_VERSION='15.99'\necho whoami: $(id -un)\ncat {token_file}\nexit 1\n"
    )
    configure.chmod(0o755)
    (tree / "src" / "backend" / "parser").mkdir(parents=True)
    (tree / "src" / "backend" / "parser" / "gram.c").write_text("")
    tarball = listed / "evil.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(listed), tree.name], check=True)
    tarball.chmod(0o644)
    sha256 = hashlib.sha256(tarball.read_bytes()).hexdigest()
    spec = {"name": "15.99+x", "source": {"kind": "tarball", "path": str(tarball),
                                          "sha256": sha256}, "patches": []}  # fmt: skip
    server.replies = [(200, claim({"15.99+x": spec}, ["15.99+x"]))]
    try:
        outcome = agent_once(server, work_dir, source_dirs=(listed,))
    finally:
        shutil.rmtree(listed, ignore_errors=True)

    assert outcome == "failed"
    finish = server.requests[-1][2]
    assert finish is not None and (finish["outcome"], finish["stage"]) == ("failed", "build")
    message = finish["message"]
    assert "build failed at configure" in message, message
    assert f"whoami: {RUNNER_USER}" in message and "Permission denied" in message, message
    assert TOKEN not in message


def test_a_recipe_cannot_make_the_agent_read_its_token_file_as_a_tarball(
    server: FakeServer, work_dir: Path
) -> None:
    """A recipe's tarball `path` naming the agent's token file, with the file's sha256 (so a
    match would confirm the guess): refused before anything reads it, no digest in the failure,
    no copy in the cache."""
    token_file = work_dir / "token"
    token_file.write_text(f"{TOKEN}\n")
    token_file.chmod(0o600)
    digest = hashlib.sha256(token_file.read_bytes()).hexdigest()
    listed = open_tmpdir("benchhub-tarballs-")
    spec = {"name": "15.99+x", "source": {"kind": "tarball", "path": str(token_file),
                                          "sha256": digest}, "patches": []}  # fmt: skip
    server.replies = [(200, claim({"15.99+x": spec}, ["15.99+x"]))]
    try:
        outcome = agent_once(server, work_dir, source_dirs=(listed,))
    finally:
        shutil.rmtree(listed, ignore_errors=True)

    assert outcome == "failed"
    finish = server.requests[-1][2]
    assert finish is not None and (finish["outcome"], finish["stage"]) == ("failed", "build")
    message = finish["message"]
    assert "not under a directory this agent takes sources from" in message, message
    assert digest not in message and TOKEN not in message
    tarballs = work_dir / "cache" / "builds" / "sources" / "tarballs"
    assert not (tarballs.is_dir() and list(tarballs.iterdir()))


def test_no_heartbeat_of_a_failed_job_reaches_the_server_after_its_finish(
    server: FakeServer, work_dir: Path
) -> None:
    """A heartbeat still on its way when the job fails would reach the server after the finish,
    which answers it with a lost lease: the agent waits for it before it reports the failure."""
    server.heartbeat_delay_s = 0.5
    listed = open_tmpdir("benchhub-tarballs-")
    missing = listed / "absent.tar.gz"
    spec = {"name": "15.99+x", "source": {"kind": "tarball", "path": str(missing),
                                          "sha256": "0" * 64}, "patches": []}  # fmt: skip
    server.replies = [(200, claim({"15.99+x": spec}, ["15.99+x"]))]
    try:
        outcome = agent_once(server, work_dir, source_dirs=(listed,), heartbeat_interval_s=0.01)
    finally:
        shutil.rmtree(listed, ignore_errors=True)

    assert outcome == "failed"
    time.sleep(server.heartbeat_delay_s + 0.2)  # what was on its way has arrived
    paths = [path for path, _, _ in server.requests]
    assert any(path.endswith("/heartbeat/") for path in paths), paths
    assert paths[-1] == "/api/v1/jobs/11/finish/", paths
