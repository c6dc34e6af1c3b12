"""Every catalog entry's SQL against a real PostgreSQL: setup, level setup and one transaction of
each measured stream's script, in a throwaway database, so SQL errors surface without an agent."""

import re
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings

from benchhub.workloads.catalog import catalog_expand, entry_list

CLIENTS = 3
SMALLER = {
    "e1-pk-lookup": {"rows": 1000},
    "e1-pk-update": {"rows": 1000},
    "e3-key-insert": {"prefill_rows": 1000},
    "e4-write-consume": {"partitions": 4, "prefill_rows": 400, "batch": 10},
}
VARIANTS = [
    (entry.id, SMALLER.get(entry.id, {}))
    for entry in entry_list()
    if catalog_expand(entry_id=entry.id).workload.get("setup")
] + [
    ("e3-key-insert", {"key_type": "text", "storage": "external", "prefill_rows": 100}),
    ("e3-key-insert", {"key_type": "int8", "storage": "plain", "index": False}),
    ("e3-key-insert", {"key_type": "uuid", "prefill_rows": 0, "index": False}),
    ("e1-batch-insert-per-table", {"batch": 5}),
]
SET_RANDOM = re.compile(r"^\\set\s+(\w+)\s+random\(\s*(\d+)\s*,\s*\d+\s*\)\s*$", re.MULTILINE)


def _conninfo(dbname: str) -> str:
    db = settings.DATABASES["default"]
    return (
        f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} "
        f"user={db['USER']} dbname={dbname}"
    )


@pytest.fixture
def scratch() -> Iterator[psycopg.Connection]:
    """A database of its own, dropped afterwards: setup runs VACUUM and CREATE EXTENSION,
    which a test transaction cannot hold."""
    name = f"bh_catalog_sql_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_conninfo("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with psycopg.connect(_conninfo(name), autocommit=True) as conn:
                yield conn
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _as_sql(body: str) -> list[str]:
    """A pgbench script as plain SQL: `\\set x random(a, b)` becomes x = a in the statements."""
    values = {name: low for name, low in SET_RANDOM.findall(body)}
    sql = SET_RANDOM.sub("", body).replace("{n}", "1")
    for name, value in values.items():
        sql = sql.replace(f":{name}", value)
    return [s.strip() for s in sql.split(";") if s.strip()]


@pytest.mark.parametrize(("entry_id", "params"), VARIANTS)
def test_it_runs_the_setup_and_a_transaction_on_postgresql(scratch, entry_id, params):
    workload = catalog_expand(entry_id=entry_id, params=params).workload
    for statement in workload["setup"]:
        scratch.execute(statement.replace("{max_clients}", str(CLIENTS)))
    for statement in workload["level_setup"]:
        scratch.execute(statement.replace("{clients}", str(CLIENTS)))
    streams = workload["streams"] or [{"role": "measured", "scripts": workload["scripts"]}]
    for stream in streams:
        if stream["role"] != "measured":
            continue
        for script in stream["scripts"]:
            for statement in _as_sql(script["body"]):
                scratch.execute(statement)
