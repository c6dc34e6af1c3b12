"""What an upload's run points at, read in one query: its build, server configuration and
workload, and its host's snapshot of the facts it reports.

Each is an app's get_or_create, one round trip each, and under load every round trip to the
database costs several ms (bench/, ingest). Nearly every upload names a build, configuration,
workload and facts already stored (an agent uploads run after run of the same), so they are
read together, the others as columns beside the build's row; anything missing is left to its
app's get_or_create, as before.
"""

from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection

from benchhub.builds.models import Build
from benchhub.builds.services import build_get_or_create, build_identity
from benchhub.configs.hashing import config_hash
from benchhub.configs.models import ServerConfig
from benchhub.configs.services import config_get_or_create
from benchhub.hosts.models import Host, HostFacts
from benchhub.hosts.services import host_facts_digest
from benchhub.workloads.models import Workload
from benchhub.workloads.services import workload_get_or_create, workload_hash


@dataclass(frozen=True)
class References:
    build: Build
    config: ServerConfig
    workload: Workload
    facts: HostFacts | None  # None: not read (host_facts_record reads or creates it)


# The columns read beside the build's row. The configuration and workload are read with what a
# run's answer and its comparability key use (RunOutSerializer); their other fields load when
# asked for.
CONFIG_FIELDS = ("id", "hash")
WORKLOAD_FIELDS = ("id", "name", "definition_hash")
FACTS_FIELDS = ("id", "fingerprint")


def run_references(*, data: dict[str, Any], host: Host) -> References:
    """The build, configuration and workload of a validated upload (RunUploadSerializer), each
    created if new, and `host`'s stored snapshot of its facts (None when there is none yet)."""
    host_in, config_in = data["host"], data["configuration"]
    config_key = config_hash(config_in["settings"], config_in["sources"])
    workload_key = workload_hash(**data["workload"])
    digest = host_facts_digest(
        facts=host_in["facts"], lscpu=host_in["lscpu"], sysctl=host_in["sysctl"],
        extra=host_in["extra"],
    )  # fmt: skip
    identity = build_identity(**data["build"])
    # One statement of a fixed shape, written once: compiling the ORM's query with its three
    # subqueries cost most of this read's time (bench/, ingest), the round trip the rest.
    found = list(
        Build.objects.raw(
            _statement(),
            [config_key, workload_key, host.pk, digest, *(identity[k] for k in IDENTITY)],
        )
    )
    if not found:
        return _created(data)
    build = found[0]
    row = {
        f"_{prefix}_{name}": build.__dict__.pop(f"_{prefix}_{name}")
        for _, prefix, _, fields, _ in BESIDE
        for name in fields
    }
    db = build._state.db or "default"
    config = _instance(ServerConfig, "config", CONFIG_FIELDS, row, db=db)
    workload = _instance(Workload, "workload", WORKLOAD_FIELDS, row, db=db)
    if config is None or workload is None:
        return _created(data, build=build)
    facts = _instance(HostFacts, "facts", FACTS_FIELDS, row, db=db)
    return References(build=build, config=config, workload=workload, facts=facts)


# Build's unique identity (builds.services.build_identity): every one a non-null column.
IDENTITY = ("version", "commit", "configure_flags", "origin", "input_key")


# What is read beside the build: (alias, prefix of its columns, model, fields, key fields).
BESIDE = (
    ("c", "config", ServerConfig, CONFIG_FIELDS, ("hash",)),
    ("w", "workload", Workload, WORKLOAD_FIELDS, ("definition_hash",)),
    ("f", "facts", HostFacts, FACTS_FIELDS, ("host", "digest")),
)


@cache
def _statement() -> str:
    """The build by its identity, with the configuration, workload and facts snapshot found by
    their keys as columns beside it (NULL where none is stored). Only the models' own table and
    column names are written into it; every value is a parameter."""
    quote = connection.ops.quote_name

    def column(alias: str, model: Any, name: str) -> str:
        return f"{alias}.{quote(model._meta.get_field(name).column)}"

    selected = [column("b", Build, f.name) for f in Build._meta.concrete_fields]
    joins = []
    for alias, prefix, model, fields, keys in BESIDE:
        selected += [f"{column(alias, model, f)} AS {quote(f'_{prefix}_{f}')}" for f in fields]
        columns = ", ".join(column(alias, model, f) for f in fields)
        where = " AND ".join(f"{column(alias, model, k)} = %s" for k in keys)
        joins.append(
            f"LEFT JOIN LATERAL (SELECT {columns} FROM {quote(model._meta.db_table)} {alias}"  # noqa: S608
            f" WHERE {where} LIMIT 1) {alias} ON true"
        )
    where = " AND ".join(f"{column('b', Build, name)} = %s" for name in IDENTITY)
    table = quote(Build._meta.db_table)
    return f"SELECT {', '.join(selected)} FROM {table} b {' '.join(joins)} WHERE {where}"  # noqa: S608


def _instance(model: Any, prefix: str, fields: tuple[str, ...], row: dict[str, Any], *, db: str):
    values = [row[f"_{prefix}_{name}"] for name in fields]
    if values[0] is None:
        return None
    # A stored row with only these fields loaded: the others load when first asked for.
    return model.from_db(db, list(fields), values)


def _created(data: dict[str, Any], *, build: Build | None = None) -> References:
    config_in = data["configuration"]
    return References(
        build=build or build_get_or_create(**data["build"]),
        config=config_get_or_create(settings=config_in["settings"], sources=config_in["sources"]),
        workload=workload_get_or_create(**data["workload"]),
        facts=None,
    )
