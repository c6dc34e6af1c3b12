"""A claimed job as the agent runs it: parsed and checked once, from the claim's JSON.

`job_parse(claim)` turns the body of `POST /api/v1/jobs/claim/` (docs/runner-api.md, The queue)
into a frozen `JobSpec`, or raises `JobSpecError` naming the field at fault by its path
(`workload.streams[1].clients`). Everything after the claim takes the `JobSpec`, never the dict.

The server validated the job when it was queued; the agent checks again what it relies on
(types, presence, the rules that keep a plan runnable) because a server of another version, or
a bug, must fail one job with a clear message rather than crash the agent halfway through it.
Fields the agent does not use (state, created_at, ...) are ignored, and so are unknown ones, so
a newer server may add fields. Absent or null optional fields take the defaults the API
documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..build.spec import BuildSpec, SpecError, git_ref_parse, spec_parse
from ..servers.tablespaces import TABLESPACE_NAME, TABLESPACE_NAME_RULE
from ..servers.versions import VersionError, version_parse
from .fields import JobSpecError, JsonObject, read_integer, read_number, read_text
from .plan import (
    Combine,
    LevelOrder,
    Plan,
    QueryMode,
    Role,
    Spec,
    ThreadsPolicy,
    plan_method,
    plan_problems,
    warmup_default,
)
from .workload import Workload, workload_read

__all__ = [
    "Combine",
    "JobSpecError",
    "LevelOrder",
    "QueryMode",
    "Role",
    "ThreadsPolicy",
    "warmup_default",
]


@dataclass(frozen=True)
class BisectRange:
    """A bisection's listing job (docs/runner-api.md, "A bisection's range"): list the commits
    of `url` between `good` and `bad` instead of measuring anything."""

    url: str
    good: str
    bad: str


@dataclass(frozen=True, kw_only=True)
class JobSpec(Plan):
    """A claimed job: its plan (plan.Plan, where the measurement's fields are said once) and
    what the agent needs besides. Client levels and versions keep the job's order;
    `level_threads` maps a client level to its pgbench threads under the `pairs` policy; the
    warm-up and the shuffle seed are decided (plan.plan_method)."""

    id: int
    attempt: int
    versions: tuple[str, ...]
    workload: Workload
    claimed_host: str | None
    warmup_s: float = 0.0
    builds: Mapping[str, BuildSpec] = field(default_factory=dict)
    # Set on a bisection's listing job: the agent lists the range and measures nothing.
    bisect_range: BisectRange | None = None
    # Tablespaces the agent creates on every server before the setup, from its [tablespaces]
    # directories; pgbench -i puts its tables in the first and its indexes in the last. Where
    # the data lives, not how it is measured: beside the plan, as the builds are.
    tablespaces: tuple[str, ...] = ()

    def duration_for(self, clients: int) -> float | None:
        """pgbench -T at a client level (None: the job runs -t)."""
        if self.duration_s is None:
            return None
        return self.level_durations.get(clients, self.duration_s)

    def threads_for(self, clients: int) -> int:
        """pgbench -j at a client level under the job's policy (pgbench refuses more threads
        than clients)."""
        if self.threads_policy == "fixed" and self.threads is not None:
            return min(self.threads, clients)
        if self.threads_policy == "pairs":
            return min(self.level_threads[clients], clients)
        return clients


# --- parsing ------------------------------------------------------------------------------------


def job_parse(claim: object) -> JobSpec:
    """The job in a claim response; raises JobSpecError naming the first field at fault."""
    job = JsonObject(claim, "")
    job_id = job.integer("id")
    try:
        return _job(job, job_id)
    except JobSpecError as exc:
        raise JobSpecError(exc.field, exc.message, job_id=job_id) from None


def _job(job: JsonObject, job_id: int) -> JobSpec:
    plan = {f.name: _plan_value(job, f.name, f.metadata["spec"]) for f in fields(Plan)}
    problems = plan_problems(plan)
    if problems:
        name, message = next(iter(problems.items()))
        raise JobSpecError(name, message)
    plan["warmup_s"], plan["shuffle_seed"] = plan_method(
        duration_s=plan["duration_s"],
        warmup_s=plan["warmup_s"],
        level_order=plan["level_order"],
        seed=plan["shuffle_seed"],
    )
    return JobSpec(
        id=job_id,
        attempt=job.integer("attempt"),
        versions=tuple(
            _version(value, path) for path, value in job.items("versions", required=True)
        ),
        workload=workload_read(job.child("workload")),
        claimed_host=job.optional_text("claimed_host"),
        tablespaces=_tablespaces(job),
        builds=_builds(job),
        bisect_range=_bisect_range(job),
        **plan,
    )


def _plan_value(job: JsonObject, name: str, spec: Spec) -> Any:
    """Plan field `name` of the claim, read as its spec says (absent or null: its default)."""
    default = getattr(Plan(), name)
    if spec.kind == "levels":
        return tuple(read_integer(value, path) for path, value in job.items(name, required=True))
    if spec.kind == "count" and not spec.nullable:
        return job.integer(name, minimum=int(spec.minimum))
    if spec.kind == "count":
        return job.optional_integer(name, minimum=int(spec.minimum))
    if spec.kind == "seconds":
        return job.optional_number(name, allow_zero=spec.minimum == 0)
    if spec.kind == "choice" and spec.choices is not None:
        return job.choice(name, tuple(spec.choices), default=default)
    if spec.kind == "text":
        return job.optional_text(name) or default
    if spec.kind == "settings":
        return _overrides(job)
    if spec.kind in ("level_counts", "level_seconds"):
        return _level_map(job, name, spec.kind)
    raise JobSpecError(name, f"the agent cannot read a plan field of kind {spec.kind!r}")


def _builds(job: JsonObject) -> dict[str, BuildSpec]:
    """The build spec of each version that names a recipe (docs/runner-api.md, "Builds in a
    claim"), checked with the builder's own rules; every key must be one of the versions."""
    builds = job.child("builds", default={})
    versions = {str(v).strip() for _, v in job.items("versions", required=True)}
    found: dict[str, BuildSpec] = {}
    for name, data in builds.value.items():
        path = builds.at(str(name))
        if name not in versions:
            raise JobSpecError(path, "is not one of the job's versions")
        try:
            found[name] = spec_parse(data)
        except SpecError as exc:
            raise JobSpecError(f"{path}.{exc.field}", exc.message) from None
    return found


def _bisect_range(job: JsonObject) -> BisectRange | None:
    """`bisect_range`: absent, null or {} on every job but a bisection's listing job."""
    found = job.child("bisect_range", default={})
    if not found.value:
        return None
    url, good, bad = (found.text(key) for key in ("url", "good", "bad"))
    for key, ref in (("good", good), ("bad", bad)):
        try:
            git_ref_parse(url, ref)
        except SpecError as exc:
            field = "url" if exc.field == "source.url" else key
            raise JobSpecError(found.at(field), exc.message) from None
    return BisectRange(url=url, good=good, bad=bad)


def _level_map(job: JsonObject, name: str, kind: str) -> dict[int, Any]:
    """An object keyed by client level: pgbench threads (level_counts) or seconds."""
    found: dict[int, Any] = {}
    for key, value in job.child(name, default={}).value.items():
        path = job.at(f"{name}.{key}")
        if not (isinstance(key, str) and key.isdigit()):
            raise JobSpecError(path, "keys are client levels")
        found[int(key)] = (
            read_integer(value, path) if kind == "level_counts" else read_number(value, path)
        )
    return found


def _overrides(job: JsonObject) -> dict[str, str]:
    overrides = job.child("config_overrides", default={})
    return {
        str(name): read_text(value, overrides.at(str(name)))
        for name, value in overrides.value.items()
    }


def _tablespaces(job: JsonObject) -> tuple[str, ...]:
    names = tuple(read_text(value, path) for path, value in job.items("tablespaces"))
    for index, name in enumerate(names):
        if not TABLESPACE_NAME.match(name):
            raise JobSpecError(job.at(f"tablespaces[{index}]"), TABLESPACE_NAME_RULE)
    if len(set(names)) != len(names):
        raise JobSpecError(job.at("tablespaces"), "names must be unique")
    return names


def _version(value: object, path: str) -> str:
    name = read_text(value, path)
    try:
        version_parse(name)
    except VersionError as exc:
        raise JobSpecError(path, str(exc)) from None
    return name.strip()
