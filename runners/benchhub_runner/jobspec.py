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

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

from .build.spec import BuildSpec, SpecError, git_ref_parse, spec_parse
from .plan import (
    QUERY_MODE_DEFAULT,
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
from .tablespaces import TABLESPACE_NAME, TABLESPACE_NAME_RULE
from .versions import VersionError, version_parse

__all__ = ["Combine", "LevelOrder", "QueryMode", "Role", "ThreadsPolicy", "warmup_default"]

Choice = TypeVar("Choice", bound=StrEnum)
# A stream's name goes into script file names and application_name: the server's name rule.
STREAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,49}$")


class JobSpecError(ValueError):
    """The claim is not a job the agent can run; `field` is the path of the value at fault and
    `job_id` the job's id when the claim had a readable one (so the failure can be reported)."""

    def __init__(self, field: str, message: str, *, job_id: int | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.job_id = job_id


@dataclass(frozen=True)
class Script:
    """A pgbench script: a builtin by name, or a body; `weight` is pgbench's @weight."""

    name: str
    weight: int
    builtin: str = ""
    body: str = ""


@dataclass(frozen=True)
class Stream:
    """One pgbench process of a measurement (or, `per_client`, one per client of the level).

    `clients` None means the level's; `threads` None means the job's threads policy.
    """

    name: str
    role: Role
    builtin: str
    scripts: tuple[Script, ...]
    clients: int | None
    threads: int | None
    per_client: bool
    rows_per_transaction: int | None

    @property
    def measured(self) -> bool:
        return self.role == "measured"

    def level_clients(self, level: int) -> int:
        """Connections this stream opens at a client level."""
        return self.clients if self.clients is not None else level

    def processes(self, level: int) -> int:
        return self.level_clients(level) if self.per_client else 1


@dataclass(frozen=True)
class Workload:
    """The workload of a job. `streams` are as the job gave them (empty: the workload's own
    builtin and scripts are one measured stream, see streams.workload_streams).

    `definition` is the JSON object as the server sent it: the upload sends it back unchanged,
    since the server identifies a workload by a hash of its definition.
    """

    name: str
    builtin: str
    scripts: tuple[Script, ...]
    setup: tuple[str, ...]
    level_setup: tuple[str, ...]
    query_mode: QueryMode
    options: tuple[str, ...]
    progress_s: int
    streams: tuple[Stream, ...]
    combine: Combine
    definition: dict[str, Any] = field(compare=False, repr=False)


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
    job = _Object(claim, "")
    job_id = job.integer("id")
    try:
        return _job(job, job_id)
    except JobSpecError as exc:
        raise JobSpecError(exc.field, exc.message, job_id=job_id) from None


def _job(job: _Object, job_id: int) -> JobSpec:
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
        workload=_workload(job.child("workload")),
        claimed_host=job.optional_text("claimed_host"),
        tablespaces=_tablespaces(job),
        builds=_builds(job),
        bisect_range=_bisect_range(job),
        **plan,
    )


def _plan_value(job: _Object, name: str, spec: Spec) -> Any:
    """Plan field `name` of the claim, read as its spec says (absent or null: its default)."""
    default = getattr(Plan(), name)
    if spec.kind == "levels":
        return tuple(_integer(value, path) for path, value in job.items(name, required=True))
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


def _builds(job: _Object) -> dict[str, BuildSpec]:
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


def _bisect_range(job: _Object) -> BisectRange | None:
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


def workload_parse(definition: object, *, path: str = "workload") -> Workload:
    """A workload definition (as in a job or an upload); raises JobSpecError."""
    return _workload(_Object(definition, path))


def _workload(workload: _Object) -> Workload:
    streams = tuple(_stream(_Object(value, p)) for p, value in workload.items("streams"))
    scripts = tuple(_script(_Object(value, p)) for p, value in workload.items("scripts"))
    builtin = workload.text("builtin", default="")
    if streams and not any(stream.measured for stream in streams):
        raise JobSpecError(workload.at("streams"), "no stream is measured")
    if not streams and not builtin and not scripts:
        raise JobSpecError(workload.at("builtin"), "give a builtin, scripts or streams")
    return Workload(
        name=workload.text("name"),
        builtin=builtin,
        scripts=scripts,
        setup=tuple(_text(value, path) for path, value in workload.items("setup")),
        level_setup=tuple(_text(value, path) for path, value in workload.items("level_setup")),
        query_mode=workload.choice("query_mode", tuple(QueryMode), default=QUERY_MODE_DEFAULT),
        options=tuple(_text(value, path) for path, value in workload.items("options")),
        progress_s=workload.integer("progress_s", default=1),
        streams=streams,
        combine=workload.choice("combine", tuple(Combine), default=Combine.SUM),
        definition=dict(workload.value),
    )


def _stream(stream: _Object) -> Stream:
    scripts = tuple(_script(_Object(value, p)) for p, value in stream.items("scripts"))
    builtin = stream.text("builtin", default="")
    if not builtin and not scripts:
        raise JobSpecError(stream.at("builtin"), "give the stream a builtin or scripts")
    name = stream.text("name")
    if not STREAM_NAME.match(name):
        raise JobSpecError(
            stream.at("name"),
            "use 1 to 50 letters, digits and . _ : @ -, starting with one of the first two",
        )
    return Stream(
        name=name,
        role=stream.choice("role", tuple(Role), default=Role.MEASURED),
        builtin=builtin,
        scripts=scripts,
        clients=stream.optional_integer("clients"),
        threads=stream.optional_integer("threads"),
        per_client=stream.boolean("per_client", default=False),
        rows_per_transaction=stream.optional_integer("rows_per_transaction"),
    )


def _script(script: _Object) -> Script:
    builtin, body = script.text("builtin", default=""), script.text("body", default="")
    if not builtin and not body:
        raise JobSpecError(script.path, "a script needs a builtin or a body")
    return Script(
        name=script.text("name", default=""),
        weight=script.integer("weight", default=1, minimum=0),
        builtin=builtin,
        body=body,
    )


def _level_map(job: _Object, name: str, kind: str) -> dict[int, Any]:
    """An object keyed by client level: pgbench threads (level_counts) or seconds."""
    found: dict[int, Any] = {}
    for key, value in job.child(name, default={}).value.items():
        path = job.at(f"{name}.{key}")
        if not (isinstance(key, str) and key.isdigit()):
            raise JobSpecError(path, "keys are client levels")
        found[int(key)] = (
            _integer(value, path) if kind == "level_counts" else _positive_number(value, path)
        )
    return found


def _overrides(job: _Object) -> dict[str, str]:
    overrides = job.child("config_overrides", default={})
    return {
        str(name): _text(value, overrides.at(str(name))) for name, value in overrides.value.items()
    }


def _tablespaces(job: _Object) -> tuple[str, ...]:
    names = tuple(_text(value, path) for path, value in job.items("tablespaces"))
    for index, name in enumerate(names):
        if not TABLESPACE_NAME.match(name):
            raise JobSpecError(job.at(f"tablespaces[{index}]"), TABLESPACE_NAME_RULE)
    if len(set(names)) != len(names):
        raise JobSpecError(job.at("tablespaces"), "names must be unique")
    return names


def _version(value: object, path: str) -> str:
    name = _text(value, path)
    try:
        version_parse(name)
    except VersionError as exc:
        raise JobSpecError(path, str(exc)) from None
    return name.strip()


# --- reading JSON values --------------------------------------------------------------------------


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(value: object, path: str, *, minimum: int = 1) -> int:
    # bool is an int to Python, never to JSON.
    if not isinstance(value, int) or isinstance(value, bool):
        raise JobSpecError(path, f"expected an integer, got {_show(value)}")
    if value < minimum:
        raise JobSpecError(path, f"expected at least {minimum}, got {value}")
    return value


def _positive_number(value: object, path: str, *, allow_zero: bool = False) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise JobSpecError(path, f"expected a number, got {_show(value)}")
    if value < 0 or (value == 0 and not allow_zero):
        least = "at least 0" if allow_zero else "more than 0"
        raise JobSpecError(path, f"expected {least}, got {value}")
    return float(value)


def _text(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise JobSpecError(path, f"expected a string, got {_show(value)}")
    return value


class _Object:
    """One JSON object of the claim at `path`, read field by field."""

    def __init__(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise JobSpecError(path or "job", f"expected an object, got {_show(value)}")
        self.value: dict[str, Any] = value
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, *, required: bool) -> object:
        value = self.value.get(key)
        if value is None and required:
            raise JobSpecError(self.at(key), "is missing" if key not in self.value else "is null")
        return value

    def integer(self, key: str, *, default: int | None = None, minimum: int = 1) -> int:
        value = self._get(key, required=default is None)
        return (
            default
            if value is None and default is not None
            else _integer(value, self.at(key), minimum=minimum)
        )

    def optional_integer(self, key: str, *, minimum: int = 1) -> int | None:
        value = self._get(key, required=False)
        return None if value is None else _integer(value, self.at(key), minimum=minimum)

    def optional_number(self, key: str, *, allow_zero: bool = False) -> float | None:
        value = self._get(key, required=False)
        if value is None:
            return None
        return _positive_number(value, self.at(key), allow_zero=allow_zero)

    def text(self, key: str, *, default: str | None = None) -> str:
        value = self._get(key, required=default is None)
        return default if value is None and default is not None else _text(value, self.at(key))

    def optional_text(self, key: str) -> str | None:
        value = self._get(key, required=False)
        return None if value is None else _text(value, self.at(key))

    def boolean(self, key: str, *, default: bool) -> bool:
        value = self._get(key, required=False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise JobSpecError(self.at(key), f"expected true or false, got {_show(value)}")
        return value

    def choice(self, key: str, choices: tuple[Choice, ...], *, default: Choice) -> Choice:
        value = self.text(key, default=str(default))
        for choice in choices:
            if value == choice:
                return choice
        raise JobSpecError(
            self.at(key), f"expected one of {', '.join(choices)}, got {_show(value)}"
        )

    def items(self, key: str, *, required: bool = False) -> list[tuple[str, object]]:
        """The entries of a list field with their paths; absent or null is empty unless
        required, and a required list must not be empty."""
        value = self._get(key, required=required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise JobSpecError(self.at(key), f"expected a list, got {_show(value)}")
        if required and not value:
            raise JobSpecError(self.at(key), "is empty")
        return [(f"{self.at(key)}[{index}]", item) for index, item in enumerate(value)]

    def child(self, key: str, *, default: dict[str, Any] | None = None) -> _Object:
        value = self._get(key, required=default is None)
        return _Object(default if value is None else value, self.at(key))
