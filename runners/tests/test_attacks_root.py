"""Attacks on the root agent through a job's own files and processes, against the real agent.

The agent runs as root in its default configuration (job code not trusted), as
test_attacks_agent.py runs it. The attacker is the job's throwaway account: while the job runs,
a thread of the test acts as that account (its uid, no other rights) on the job's directory,
as code of the job that escaped into a shell would. The root agent must not act through what
it leaves there: a log replaced by a link to the agent's configuration, a data directory
replaced by a link to another cluster's.

Listed in docs/security.md ("The sandbox and the root agent's hands").
"""

from __future__ import annotations

import json
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import open_tmpdir
from test_attacks_agent import TOKEN, job_with, run_agent

from benchhub_runner.sandbox.account import job_account_name
from benchhub_runner.servers.cluster import Cluster, free_port

SLOW = pytest.mark.slow


@pytest.fixture
def host(prebuilt14, client_bindir: Path) -> Iterator[dict[str, Path]]:
    """A work directory for the agent (as test_attacks_agent.py's `host`)."""
    work = open_tmpdir("benchhub-attack-root-")
    yield {"work": work, "server_bindir": prebuilt14.bindir, "client": client_bindir}
    shutil.rmtree(work, ignore_errors=True)


def as_job_account(host: dict[str, Path], script: str, *, when: Callable[[Path], bool]) -> dict:
    """Start a thread that waits until `when(job directory)` holds, then runs `script` in the
    job's directory as the job's account; returns what it saw ({"done": exit status})."""
    name = job_account_name(41, 1, work=host["work"])
    job_dir = host["work"] / "jobs" / "41-1"
    seen: dict = {}

    def attack() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if job_dir.is_dir() and when(job_dir):
                try:
                    uid = pwd.getpwnam(name).pw_uid
                except KeyError:
                    time.sleep(0.02)
                    continue
                setpriv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
                done = subprocess.run(
                    [*setpriv, "sh", "-c", script], cwd=job_dir, capture_output=True, text=True
                )
                seen.update(done=done.returncode, output=done.stdout + done.stderr)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    seen["thread"] = thread
    return seen


def public_fields(stand_in) -> str:
    """Everything the agent sent the server: finish message, heartbeats, uploaded runs."""
    return json.dumps([body for _, body in stand_in.requests])


def server_up(index: int) -> Callable[[Path], bool]:
    return lambda job_dir: any((job_dir / f"v{index}" / "socket").glob(".s.PGSQL.*[0-9]"))


# Where the link points: files root reads and the job's account may not. /proc's files have
# no size, so no offset taken before the start skips what they hold.
LINK_TARGETS = {
    "the agent's configuration": lambda work: str(work / "agent.toml"),
    "the agent's environment": lambda work: "/proc/$(pgrep -of 'benchhub_runner.cli once')/environ",
}


@SLOW
@pytest.mark.parametrize("target", list(LINK_TARGETS))
def test_attack_a_log_linked_to_what_holds_the_token_is_never_quoted(host, target):
    """The job's account breaks its second server's configuration and puts a link to what
    holds the runner token where the server's log was: the server's restart fails, and the
    failure message quotes no line through the link."""
    link = LINK_TARGETS[target](host["work"])
    script = (
        "echo \"shared_buffers = 'nonsense'\" >> v1/data/postgresql.conf && "
        f"rm -f v1/postgres.log && ln -s {link} v1/postgres.log"
    )
    seen = as_job_account(host, script, when=server_up(1))
    job = job_with(builtin="select-only")
    job["versions"] = ["14", "14"]
    stand_in = run_agent(host, job)
    seen["thread"].join(timeout=10)
    assert seen.get("done") == 0, seen
    finish = stand_in.finish()
    assert finish["outcome"] == "failed", (finish, stand_in.output)
    assert "did not start" in finish["message"], finish["message"]
    assert TOKEN not in public_fields(stand_in)
    assert "token" not in finish["message"], finish["message"]


@pytest.fixture
def other_cluster(prebuilt14, client_bindir: Path) -> Iterator[Cluster]:
    """Another PostgreSQL cluster on the host, not the job's (as the agent's build user)."""
    work = open_tmpdir("benchhub-other-cluster-")
    cluster = Cluster(
        installation=prebuilt14, client_bindir=client_bindir, workdir=work, port=free_port()
    )
    with cluster:
        yield cluster
    shutil.rmtree(work, ignore_errors=True)


@SLOW
def test_attack_a_data_directory_linked_to_another_cluster_leaves_that_cluster_alone(
    host, other_cluster
):
    """The job's account moves its running server's data directory aside and puts a link to
    another cluster's in its place: at the job's end the root agent stops the job's own server
    and neither signals the other cluster's processes nor removes its postmaster.pid."""
    before = other_cluster.postmaster_pid()
    assert before is not None
    script = f"mv v0/data v0/data.moved && ln -s {other_cluster.datadir} v0/data"
    seen = as_job_account(host, script, when=server_up(0))
    stand_in = run_agent(host, job_with(builtin="select-only"))
    seen["thread"].join(timeout=10)
    assert seen.get("done") == 0, seen
    assert stand_in.finish()["outcome"] in ("done", "failed"), stand_in.output
    assert other_cluster.postmaster_pid() == before
    assert (other_cluster.datadir / "postmaster.pid").is_file()
    assert other_cluster.sql("SELECT 1") == "1"
    # The job's own server ended with the job all the same.
    left = subprocess.run(["pgrep", "-f", f"{host['work']}/jobs"], capture_output=True, text=True)
    assert left.stdout.strip() == ""
