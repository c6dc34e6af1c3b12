"""The workload catalog: named, parametrised workloads from the published experiments.

Pure code. `catalog_expand` turns (entry id, params) into a workload definition (the shape
WorkloadInSerializer takes) and the job defaults the entry suggests; `catalog_job_request`
rewrites a job request whose workload is `{"catalog": id, "params": {...}}` into a plain one.
Errors are DRF ValidationErrors keyed by the path of the bad value (`catalog`,
`params.<name>`), nested under `workload` for job requests, so the API names the field.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchhub_runner.servers.versions import VersionError, version_parse
from rest_framework.exceptions import ValidationError

from benchhub.workloads.catalog_entries import ENTRIES
from benchhub.workloads.catalog_types import Entry, ParamValue
from benchhub.workloads.services import workload_definition

EXPERIMENTS = ("builtin", "E1", "E2", "E3", "E4", "E5")
JOB_FIELDS = (
    "clients",
    "threads_policy",
    "threads",
    "level_threads",
    "level_durations",
    "duration_s",
    "scale",
    "repeats",
    "config_overrides",
)
_BY_ID = {entry.id: entry for entry in ENTRIES}


@dataclass(frozen=True)
class Expansion:
    workload: dict[str, Any]
    job: dict[str, Any]


def entry_list() -> tuple[Entry, ...]:
    """Every entry, in catalog order (builtins, then E1..E5)."""
    return ENTRIES


def entry_get(*, entry_id: str) -> Entry | None:
    return _BY_ID.get(entry_id)


def _entry(entry_id: Any) -> Entry:
    entry = _BY_ID.get(entry_id) if isinstance(entry_id, str) else None
    if entry is None:
        raise ValidationError(
            {"catalog": [f"Unknown catalog entry {str(entry_id)[:100]!r}; see /workloads/."]}
        )
    return entry


def params_resolve(*, entry: Entry, params: Any) -> dict[str, ParamValue]:
    """The entry's defaults with `params` merged over them, each value checked.

    Raises ValidationError({"params": {name: [message]}}) for unknown names, wrong types,
    values out of bounds and values that do not go together."""
    if not isinstance(params, Mapping):
        raise ValidationError({"params": ["Give params as an object of name: value."]})
    errors: dict[str, list[str]] = {}
    resolved = entry.defaults()
    for name, value in params.items():
        param = entry.param(name)
        if param is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            errors[str(name)[:100]] = [f"Unknown parameter of {entry.id}; known: {known}."]
            continue
        try:
            resolved[name] = param.check(value)
        except ValueError as exc:
            errors[name] = [str(exc)]
    if not errors:
        errors = {name: [message] for name, message in entry.check(resolved).items()}
    if errors:
        raise ValidationError({"params": errors})
    return resolved


def catalog_expand(*, entry_id: str, params: Any = None, published: bool = False) -> Expansion:
    """The workload definition and job defaults of an entry with `params` over its defaults
    (over its published sizes with `published=True`). Raises ValidationError keyed `catalog`
    or `params.<name>`."""
    entry = _entry(entry_id)
    base = entry.published_params() if published else None
    if published and base is None:
        raise ValidationError({"catalog": [f"{entry.id} has no published size."]})
    resolved = params_resolve(entry=entry, params={**(base or {}), **(params or {})})
    workload = workload_definition(
        name=entry.id,
        **entry.build(resolved),
        catalog_entry=entry.id,
        params=resolved,
        presentation=_presentation(entry),
    )
    job = (entry.published_job if published else None) or entry.small_job
    return Expansion(workload=workload, job=entry.job_for(job, resolved).as_dict())


def _presentation(entry: Entry) -> str:
    return {
        "E2": "connections",
        "E3": "evidence",
        "E4": "streams",
        "E5": "improvement",
    }.get(entry.experiment, "sweep")


def catalog_job_request(data: Any) -> Any:
    """A job request with `"workload": {"catalog": id, "params": {...}}` expanded; others as is.

    Job fields the request omits take the entry's defaults. A scale param and the job's scale
    are one value: a request giving only `scale` sets the param. Errors are keyed
    `workload.catalog`, `workload.params.<name>`, `workload.<field>` or `scale`."""
    if not isinstance(data, Mapping):
        return data
    workload = data.get("workload")
    if not isinstance(workload, Mapping) or "catalog" not in workload:
        return data
    extra = sorted(set(workload) - {"catalog", "params"})
    if extra:
        message = "With catalog, give only catalog and params."
        raise ValidationError({"workload": {name: [message] for name in extra}})
    try:
        entry = _entry(workload["catalog"])
        params = _params_with_scale(entry, workload.get("params") or {}, data.get("scale"))
        expansion = catalog_expand(entry_id=entry.id, params=params)
    except ValidationError as exc:
        raise ValidationError({"workload": exc.detail}) from None
    scale = expansion.workload["params"].get("scale")
    if entry.param("scale") and data.get("scale") not in (None, scale):
        raise ValidationError({"scale": ["Differs from workload.params.scale; give one."]})
    _check_versions(entry, data.get("versions"))
    request = {**data, "workload": expansion.workload}
    for name in JOB_FIELDS:
        if name not in data:
            request[name] = expansion.job[name]
    if entry.param("scale"):
        request["scale"] = scale
    # The tablespaces the entry's SQL names are the job's too, whatever else the job names.
    given = data.get("tablespaces") or []
    if isinstance(given, list):  # anything else is the serializer's to refuse
        needed = [name for name in expansion.job["tablespaces"] if name not in given]
        request["tablespaces"] = [*given, *needed]
    return request


def _check_versions(entry: Entry, versions: Any) -> None:
    """ValidationError keyed `versions` naming each version older than the entry's minimum
    major (its SQL, scripts or options are not there); names that do not parse are left to the
    job's own validation."""
    oldest = _major_key(entry.min_major)
    older = []
    for name in versions if isinstance(versions, list) else []:
        try:
            major = version_parse(str(name)).major
        except VersionError:
            continue
        if major != "master" and _major_key(major) < oldest:
            older.append(str(name))
    if older:
        raise ValidationError(
            {
                "versions": [
                    f"{entry.id} runs on PostgreSQL {entry.min_major} and later (what it uses "
                    f"arrived then); not on {', '.join(older)}."
                ]
            }
        )


def _major_key(major: str) -> tuple[int, int]:
    head, _, tail = major.partition(".")
    return int(head), int(tail or 0)


def _params_with_scale(entry: Entry, params: Any, scale: Any) -> Any:
    if isinstance(params, Mapping) and entry.param("scale") and "scale" not in params:
        if isinstance(scale, int) and not isinstance(scale, bool):
            return {**params, "scale": scale}
    return params


def params_from_text(*, entry_id: str, text: str) -> dict[str, ParamValue]:
    """Params typed by a person: a JSON object, or `name = value` lines (# starts a comment),
    each value read in its param's type. Raises ValidationError keyed `params.<name>`."""
    entry = _entry(entry_id)
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return dict(json.loads(stripped))
        except (ValueError, TypeError):
            raise ValidationError({"params": ["Not a JSON object."]}) from None
    params: dict[str, ParamValue] = {}
    errors: dict[str, list[str]] = {}
    for line in stripped.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, value = line.partition("=")
        name = name.strip()
        param = entry.param(name)
        if not sep or param is None:
            errors[name or line] = [f"'{line[:100]}' is not name = value of a parameter."]
            continue
        try:
            params[name] = param.parse(value)
        except ValueError as exc:
            errors[name] = [str(exc)]
    if errors:
        raise ValidationError({"params": errors})
    return params


def entry_describe(*, entry: Entry) -> dict[str, Any]:
    """An entry as the API and the /workloads/ page show it: params with their small and
    published values, the job defaults at both sizes, and the default expansion."""
    small = catalog_expand(entry_id=entry.id)
    published = catalog_expand(entry_id=entry.id, published=True) if entry.published_job else None
    return {
        "id": entry.id,
        "experiment": entry.experiment,
        "title": entry.title,
        "description": entry.description,
        "presentation": small.workload["presentation"],
        "params": [param.describe() for param in entry.params],
        "min_major": entry.min_major,
        "job_defaults": small.job,
        "published_job": published.job if published else None,
        "workload": small.workload,
    }
