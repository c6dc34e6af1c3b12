"""Writes for workloads."""

from typing import Any

from benchhub.digests import canonical_digest
from benchhub.workloads.models import Workload


def workload_hash(
    *,
    name: str,
    builtin: str,
    scripts: list[dict[str, Any]],
    setup: list[Any],
    query_mode: str,
    options: list[str],
) -> str:
    return canonical_digest(
        {
            "name": name,
            "builtin": builtin,
            "scripts": scripts,
            "setup": setup,
            "query_mode": query_mode,
            "options": options,
        }
    )


def workload_get_or_create(
    *,
    name: str,
    builtin: str = "",
    scripts: list[dict[str, Any]] | None = None,
    setup: list[Any] | None = None,
    query_mode: str = Workload.QueryMode.SIMPLE,
    options: list[str] | None = None,
) -> Workload:
    """The workload with exactly this definition, created if new."""
    definition = {
        "name": name,
        "builtin": builtin,
        "scripts": scripts or [],
        "setup": setup or [],
        "query_mode": query_mode,
        "options": options or [],
    }
    workload, _ = Workload.objects.get_or_create(
        definition_hash=workload_hash(**definition), defaults=definition
    )
    return workload
