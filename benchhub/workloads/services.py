"""Writes for workloads."""

from typing import Any

from benchhub.digests import canonical_digest
from benchhub.workloads.models import Workload

# Fields added after the first definitions: hashed only when they differ from these defaults,
# so a workload defined before them keeps its hash (and its runs stay comparable).
OPTIONAL_DEFAULTS: dict[str, Any] = {
    "level_setup": [],
    "streams": [],
    "combine": Workload.Combine.SUM,
    "progress_s": 1,
    "catalog_entry": "",
    "params": {},
    "presentation": Workload.Presentation.SWEEP,
}
BASE_FIELDS = ("name", "builtin", "scripts", "setup", "query_mode", "options")


def workload_definition(**fields: Any) -> dict[str, Any]:
    """Every field of a workload definition, defaults filled in."""
    definition = {
        "name": fields["name"],
        "builtin": fields.get("builtin") or "",
        "scripts": fields.get("scripts") or [],
        "setup": fields.get("setup") or [],
        "query_mode": fields.get("query_mode") or Workload.QueryMode.SIMPLE,
        "options": fields.get("options") or [],
    }
    for name, default in OPTIONAL_DEFAULTS.items():
        value = fields.get(name)
        definition[name] = default if value is None else value
    return definition


def workload_hash(**fields: Any) -> str:
    """The identity of a definition: the base fields, and the optional ones that are set."""
    definition = workload_definition(**fields)
    hashed = {name: definition[name] for name in BASE_FIELDS}
    hashed.update(
        {
            name: definition[name]
            for name, default in OPTIONAL_DEFAULTS.items()
            if definition[name] != default
        }
    )
    return canonical_digest(hashed)


def workload_get_or_create(**fields: Any) -> Workload:
    """The workload with exactly this definition (WorkloadInSerializer's output), created if new."""
    definition = workload_definition(**fields)
    workload, _ = Workload.objects.get_or_create(
        definition_hash=workload_hash(**definition), defaults=definition
    )
    return workload
