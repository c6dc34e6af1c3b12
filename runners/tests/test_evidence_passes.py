"""pg_stat_statements sits in every statement's path: the agent leaves it tracking nothing
during measured passes and switches it on only for a level's evidence pass, against a real
prebuilt server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import open_tmpdir

from benchhub_runner.evidence import ServerEvidence, statements
from benchhub_runner.servers.cluster import Cluster, free_port
from benchhub_runner.servers.installation import Installation

# A table's name survives the normalisation of constants in the statements' text.
MARK = "SELECT count(*) FROM public.evidence_mark"


@pytest.fixture(scope="module")
def cluster(prebuilt14: Installation, client_bindir: Path) -> Iterator[Cluster]:
    work = open_tmpdir("benchhub-evidence-passes-")
    made = Cluster(
        installation=prebuilt14,
        client_bindir=client_bindir,
        workdir=work / "run",
        port=free_port(),
        preload=(statements.MODULE,),
    )
    made.initdb()
    made.start()
    made.sql("CREATE TABLE public.evidence_mark (a int)", job=True)
    yield made
    made.stop(mode="immediate")
    shutil.rmtree(work, ignore_errors=True)


def _calls(cluster: Cluster) -> int:
    rows = statements.top(cluster, version_num=140000)
    return sum(r["calls"] for r in rows if "evidence_mark" in r["query"])


def test_it_tracks_no_statement_outside_the_evidence_pass(cluster: Cluster):
    server = ServerEvidence.probe(cluster, preloaded=True)
    assert server.statements is None
    assert cluster.sql(f"SHOW {statements.MODULE}.track") == "none"
    assert cluster.sql("SHOW compute_query_id") == "off"
    statements.reset(cluster)
    for _ in range(3):
        cluster.sql(MARK, job=True)
    assert _calls(cluster) == 0

    server.tracking(cluster, on=True)
    assert cluster.sql("SHOW compute_query_id") == "auto"
    for _ in range(3):
        cluster.sql(MARK, job=True)
    server.tracking(cluster, on=False)
    cluster.sql(MARK, job=True)
    assert _calls(cluster) == 3
    assert cluster.sql(f"SHOW {statements.MODULE}.track") == "none"
