"""What an upload's run points at, read in one query: its build, server configuration and
workload, and its host's snapshot of the facts it reports.

Each is an app's get_or_create, one round trip each, and under load every round trip to the
database costs several ms (bench/, ingest). Nearly every upload names a build, configuration,
workload and facts already stored (an agent uploads run after run of the same), so they are
read together, the others as columns beside the build's row; anything missing is left to its
app's get_or_create, as before.
"""

from dataclasses import dataclass
from typing import Any

from django.db.models import Subquery

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


# The columns each read carries beside the build's row. The configuration and workload are
# read with what a run's answer and its comparability key use (RunOutSerializer); their other
# fields load when asked for.
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
    reads = {
        **_columns("config", ServerConfig.objects.filter(hash=config_key), CONFIG_FIELDS),
        **_columns(
            "workload", Workload.objects.filter(definition_hash=workload_key), WORKLOAD_FIELDS
        ),
        **_columns("facts", HostFacts.objects.filter(host=host, digest=digest), FACTS_FIELDS),
    }
    # The build's identity is unique: no ORDER BY for first() to add.
    found = Build.objects.filter(**build_identity(**data["build"])).annotate(**reads)
    build = next(iter(found), None)
    if build is None:
        return _created(data)
    row = {name: build.__dict__.pop(name) for name in reads}
    db = build._state.db or found.db
    config = _instance(ServerConfig, "config", CONFIG_FIELDS, row, db=db)
    workload = _instance(Workload, "workload", WORKLOAD_FIELDS, row, db=db)
    if config is None or workload is None:
        return _created(data, build=build)
    facts = _instance(HostFacts, "facts", FACTS_FIELDS, row, db=db)
    return References(build=build, config=config, workload=workload, facts=facts)


def _columns(prefix: str, rows: Any, fields: tuple[str, ...]) -> dict[str, Subquery]:
    return {f"_{prefix}_{name}": Subquery(rows.values(name)[:1]) for name in fields}


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
