"""The sandbox a job's programs run in (bubblewrap), and the root agent's file handling in a
job's directories (jobfs): what exists inside, what the agent refuses to follow.

These run bwrap as a job account would (root starts it as an unprivileged account)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import open_tmpdir

from benchhub_runner.sandbox import jobfs
from benchhub_runner.sandbox.account import account_remove, runner_account
from benchhub_runner.sandbox.bubblewrap import Sandbox, probe, sandbox_main
from benchhub_runner.servers.cluster import Cluster, free_port

SECRET = "agent-secret-that-job-code-must-not-see"


@pytest.fixture
def layout() -> Iterator[dict[str, Path]]:
    """A job directory and, beside it, files of the agent's (a configuration, a spool)."""
    base = open_tmpdir("benchhub-sandbox-")
    job, agent = base / "jobs" / "7-1", base / "agent"
    job.mkdir(parents=True)
    agent.mkdir()
    (agent / "agent.toml").write_text(f'token = "{SECRET}"\n')
    (agent / "agent.toml").chmod(0o644)  # readable by anyone outside: only absence protects it
    account = runner_account(name="bhjob-sandboxtest-7-1", home=job)
    assert account is not None
    os.chown(job, account.uid, account.gid)
    yield {"base": base, "job": job, "agent": agent, "uid": Path(str(account.uid))}
    account_remove(account)
    shutil.rmtree(base, ignore_errors=True)


def run_inside(layout: dict[str, Path], script: str) -> subprocess.CompletedProcess[str]:
    uid = int(str(layout["uid"]))
    argv = Sandbox(writable=(layout["job"],)).wrap(["/bin/sh", "-c", script], cwd=layout["job"])
    return subprocess.run(
        argv, capture_output=True, text=True, user=uid, group=uid, extra_groups=[], timeout=60
    )


def test_it_probes_this_host_as_able_to_sandbox():
    assert probe() is None


def test_it_shows_job_code_only_its_own_directory_the_system_and_its_own_processes(layout):
    agent = layout["agent"]
    script = (
        f"cat {agent}/agent.toml; ls {layout['base']}; echo mine > own.txt; "
        "echo pids $(ls /proc | grep -c '^[0-9]'); echo ppid1 $(cat /proc/1/comm); "
        "touch /usr/x 2>&1; ls /root 2>&1; echo done"
    )
    done = run_inside(layout, script)
    assert done.stdout.strip().endswith("done"), done
    assert SECRET not in done.stdout + done.stderr
    assert "No such file or directory" in done.stderr  # the agent's directory is not there
    assert (layout["job"] / "own.txt").read_text() == "mine\n"
    pids = int(done.stdout.split("pids ")[1].split()[0])
    # bwrap's init, the shell, its command substitution and the two programs in it: nothing of
    # the host's (hundreds of processes outside).
    assert pids <= 8, done.stdout
    assert "Read-only file system" in done.stdout or "Permission denied" in done.stdout


def test_it_cuts_job_code_off_the_network(layout):
    done = run_inside(layout, "cat /proc/net/dev | grep -c ':'")
    assert done.stdout.strip() == "1", done  # the loopback device of its own namespace only


def test_it_runs_a_sandboxed_server_as_the_main_program_of_its_sandbox(
    layout, prebuilt14, client_bindir
):
    cluster = Cluster(
        installation=prebuilt14,
        client_bindir=client_bindir,
        workdir=layout["job"] / "v0",
        port=free_port(),
        sandbox=Sandbox(writable=(layout["job"],)),
        account_name="bhjob-sandboxtest-7-1",
    )
    with cluster:
        assert cluster.sql("SELECT 1") == "1"
        main = cluster.postmaster_pid()
        assert main is not None and cluster._server is not None
        assert main == sandbox_main(cluster._server.pid)
        assert Path(f"/proc/{main}/exe").resolve() == (prebuilt14.bindir / "postgres").resolve()
        # The server's own pid file names its pid inside, which means nothing outside.
        assert (cluster.datadir / "postmaster.pid").read_text().split("\n")[0] == "2"
    assert not Path(f"/proc/{main}").exists()
    assert not (cluster.datadir / "postmaster.pid").exists()


def test_it_refuses_a_link_anywhere_below_the_job_directory(tmp_path):
    job = tmp_path / "job"
    (job / "v0").mkdir(parents=True)
    (tmp_path / "secret").write_text(SECRET)
    (job / "v0" / "postgres.log").symlink_to(tmp_path / "secret")
    (job / "v1").symlink_to(tmp_path)
    with pytest.raises(OSError):
        jobfs.read_tail(job / "v0" / "postgres.log", trusted=job)
    with pytest.raises(OSError):
        jobfs.read_tail(job / "v1" / "secret", trusted=job)
    assert not jobfs.unlink(job / "v1" / "secret", trusted=job)
    assert (tmp_path / "secret").read_text() == SECRET
    assert jobfs.identity(job / "v1", trusted=job) is None
    with pytest.raises(OSError):
        jobfs.append(job / "v0" / "postgres.log", "x", trusted=job)
    assert (tmp_path / "secret").read_text() == SECRET


def test_it_reads_a_bounded_tail_of_the_owners_own_file_only(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    log = job / "postgres.log"
    log.write_text("x" * 10000 + "\nlast line\n")
    assert jobfs.read_tail(log, trusted=job, limit=100).endswith(b"last line\n")
    assert len(jobfs.read_tail(log, trusted=job, limit=100)) == 100
    with pytest.raises(OSError, match="not the job account's own"):
        jobfs.read_tail(log, trusted=job, owner=os.getuid() + 1)
