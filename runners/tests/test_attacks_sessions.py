"""The agent's own sessions are never the job's: against a real prebuilt PostgreSQL 14 started as
the agent starts it, each layer alone keeps job objects out of what the agent's superuser sessions
run (statistics, wait samples, settings, top statements).

Listed in docs/security.md ("Job code on a benchmark host").
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import open_tmpdir

from benchhub_runner.evidence import ServerEvidence, serverstats, statements
from benchhub_runner.evidence.waits import WaitSampler
from benchhub_runner.jobcode.sql import check_sql
from benchhub_runner.servers.cluster import JOB_ROLE, Cluster, ClusterError, free_port
from benchhub_runner.servers.installation import Installation

# Every view the agent reads, shadowed by one that records who read it through a function.
SHADOWED = (
    "pg_stat_activity",
    "pg_stat_bgwriter",
    "pg_stat_database",
    "pg_stat_wal",
    "pg_views",
    "pg_settings",
    "pg_database",
    "pg_stat_statements",
)
TRAP = """
CREATE SCHEMA evil;
CREATE TABLE evil.ran (who text);
GRANT ALL ON SCHEMA evil TO PUBLIC;
GRANT ALL ON evil.ran TO PUBLIC;
CREATE FUNCTION evil.boom() RETURNS int LANGUAGE sql
    AS $$ INSERT INTO evil.ran VALUES (current_user) RETURNING 1 $$;
"""


@pytest.fixture(scope="module")
def cluster(prebuilt14: Installation, client_bindir: Path) -> Iterator[Cluster]:
    work = open_tmpdir("benchhub-sessions-")
    made = Cluster(
        installation=prebuilt14,
        client_bindir=client_bindir,
        workdir=work / "run",
        port=free_port(),
        preload=(statements.MODULE,),
    )
    made.initdb()
    made.start()
    made.job_role_create()
    yield made
    made.stop(mode="immediate")
    shutil.rmtree(work, ignore_errors=True)


def test_it_refuses_the_job_role_any_default_the_agents_sessions_inherit(cluster: Cluster):
    # The job may still build what a benchmark needs in its database.
    cluster.sql("CREATE SCHEMA jobs_own; CREATE TABLE t (a int)", user=JOB_ROLE, job=True)
    for stored in (
        "ALTER DATABASE postgres SET search_path = jobs_own, pg_catalog",
        "ALTER ROLE postgres SET search_path = jobs_own, pg_catalog",
        "ALTER ROLE ALL SET search_path = jobs_own, pg_catalog",
        "ALTER DATABASE postgres OWNER TO benchhub_job",
    ):
        with pytest.raises(ClusterError, match=r"must be|permission denied"):
            cluster.sql(stored, user=JOB_ROLE, job=True)
    assert cluster.sql("SELECT count(*) FROM pg_catalog.pg_db_role_setting") == "0"


def test_it_refuses_stored_defaults_in_job_sql_before_it_reaches_a_server():
    (refusal,) = check_sql("alter database postgres set search_path = evil, pg_catalog", field="s")
    assert "ALTER DATABASE ... SET stores session defaults" in refusal.reason
    (refusal,) = check_sql("ALTER USER CURRENT_USER RESET ALL", field="s")
    assert refusal.reason.startswith("ALTER USER ... SET")
    assert check_sql("ALTER TABLE t SET (fillfactor = 50)", field="s") == []


def test_it_keeps_the_agents_reads_off_views_a_stored_search_path_puts_first(cluster: Cluster):
    # The layer beneath the role: suppose a default did get stored (a trusted job, an older
    # agent's database owner); the agent's sessions still read only the catalog's own views.
    cluster.sql(TRAP)
    for view in SHADOWED:
        cluster.sql(f"CREATE VIEW evil.{view} AS SELECT evil.boom() AS boom")
    cluster.sql("ALTER DATABASE postgres SET search_path = evil, pg_catalog")
    cluster.sql("ALTER ROLE postgres SET search_path = evil, pg_catalog")
    try:
        # The trap is live: a session that takes the stored defaults (job code) walks into it.
        cluster.sql("SELECT * FROM pg_stat_activity", job=True)
        assert cluster.sql("SELECT count(*) FROM evil.ran") == "1"
        cluster.sql("TRUNCATE evil.ran")

        agent_reads(cluster)

        assert cluster.sql("SELECT count(*) FROM evil.ran") == "0"
    finally:
        cluster.sql("ALTER DATABASE postgres RESET ALL; ALTER ROLE postgres RESET ALL")


def agent_reads(cluster: Cluster) -> None:
    """Every read the agent makes of a running server, the way it makes it."""
    cluster.settings()
    evidence = ServerEvidence.probe(cluster, preloaded=bool(cluster.preload))
    server = evidence.server
    assert server.version_num // 10000 == 14 and "bgwriter" in server.views
    before = serverstats.snapshot(cluster, server)
    serverstats.settle(cluster, server)
    assert serverstats.deltas(before, serverstats.snapshot(cluster, server))["wal_bytes"] >= 0
    assert evidence.statements is None, evidence.statements
    statements.reset(cluster)
    statements.top(cluster, version_num=server.version_num)
    sampler = WaitSampler(cluster=cluster, version_num=server.version_num, interval_s=0.05)
    sampler.start()
    sampler.stop()
    assert sampler.error is None and sampler.rounds >= 1
    # Even an unqualified read in an agent session resolves in the catalog.
    cluster.sql("SELECT count(*) FROM pg_stat_activity")
