"""The shapes of the workload catalog: a parameter, a job's defaults, an entry.

Pure code: no database, no Django. catalog_entries.py holds the entries, catalog.py looks them
up and expands one (entry id, params) into a workload definition and the job's defaults.
"""

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

ParamValue = int | str | bool


@dataclass(frozen=True)
class Param:
    """A knob of a catalog entry. `default` is the small size (well under a minute per level on
    a 2-core machine); `published` is the size its authors used (None: not from a publication).
    `minimum`/`maximum` bound int params; `choices` lists the values of a choice param."""

    name: str
    type: str  # "int" | "str" | "bool" | "choice"
    default: ParamValue
    help: str
    published: ParamValue | None = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    max_length: int = 200

    def check(self, value: Any) -> ParamValue:
        """The value if it fits this param; raises ValueError with a sentence saying why not.

        JSON types are strict: 12 for an int, true for a bool, never "12" or "true" (the text
        forms go through `parse` first)."""
        if self.type == "bool":
            if not isinstance(value, bool):
                raise ValueError("Must be true or false.")
            return value
        if self.type == "int":
            return self._check_int(value)
        if not isinstance(value, str):
            raise ValueError("Must be a string.")
        if self.type == "choice" and value not in self.choices:
            raise ValueError(f"Must be one of {', '.join(self.choices)}.")
        if len(value) > self.max_length:
            raise ValueError(f"At most {self.max_length} characters.")
        return value

    def _check_int(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("Must be a whole number.")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"Must be at least {self.minimum}.")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"Must be at most {self.maximum}.")
        return value

    def parse(self, text: str) -> ParamValue:
        """A value typed as text (a form, `--param k=v`) in this param's type, then checked."""
        text = text.strip()
        if self.type == "int":
            try:
                return self.check(int(text.replace("_", "")))
            except ValueError as exc:
                if "Must" in str(exc):
                    raise
                raise ValueError("Must be a whole number.") from None
        if self.type == "bool":
            lowered = text.lower()
            if lowered not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                raise ValueError("Must be true or false.")
            return lowered in ("true", "on", "yes", "1")
        return self.check(text)

    def describe(self) -> dict[str, Any]:
        return asdict(self) | {"choices": list(self.choices)}


@dataclass(frozen=True)
class JobDefaults:
    """The job fields a catalog entry suggests; a request's own fields win over these."""

    clients: list[int]
    duration_s: float
    threads_policy: str = "clients"
    threads: int | None = None
    level_threads: dict[str, int] = field(default_factory=dict)
    level_durations: dict[str, float] = field(default_factory=dict)
    scale: int | None = None
    config_overrides: dict[str, str] = field(default_factory=dict)
    repeats: int = 1
    # The tablespaces the entry's SQL names (its tablespace params): the job must create them.
    tablespaces: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_params(self, params: Mapping[str, Any]) -> "JobDefaults":
        """The scale param, where an entry has one, is the job's scale (pgbench -i -s)."""
        if "scale" in params:
            return replace(self, scale=params["scale"])
        return self


def _same_job(job: JobDefaults, params: Mapping[str, Any]) -> JobDefaults:
    return job.with_params(params)


def _no_conflicts(params: Mapping[str, Any]) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Entry:
    """A named, parametrised workload. `build(params)` returns the definition's fields other
    than name, catalog_entry and params; `check(params)` returns {param: message} for values
    that do not go together; `job_for(defaults, params)` adjusts job defaults to the params
    (default: scale from the scale param)."""

    id: str
    experiment: str  # "builtin" | "E1" .. "E5"
    title: str
    description: str
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, Any]], dict[str, Any]]
    small_job: JobDefaults
    published_job: JobDefaults | None = None
    check: Callable[[Mapping[str, Any]], dict[str, str]] = _no_conflicts
    job_for: Callable[[JobDefaults, Mapping[str, Any]], JobDefaults] = _same_job
    # The oldest major whose pgbench and server take the entry's SQL, scripts and options
    # (benchhub_runner.servers.capabilities); every supported major from it on runs the entry.
    min_major: str = "9.2"

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def defaults(self) -> dict[str, ParamValue]:
        return {p.name: p.default for p in self.params}

    def published_params(self) -> dict[str, ParamValue] | None:
        if self.published_job is None:
            return None
        return {p.name: p.default if p.published is None else p.published for p in self.params}
