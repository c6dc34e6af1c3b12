"""A job's measurement plan, said once: its fields, their enums, defaults and bounds, and the
rules that hold between them. Standard library only.

The agent parses a claim into a JobSpec, which is a Plan (spec.py); the server derives from
the same fields its job serializer (the API, the form, `manage.py job_create`, a schedule's
template, "again", "settle it" and a bisection all meet there), the fields it copies when it
queues a job again, and the rules it checks before it stores one. A field added here reaches all
of them; what remains is its column (a migration), its use and the page that shows it.

Defaults are the API's, whatever the entry point: `repeats` 1 and a workload's `query_mode`
"simple" (docs/runner-api.md, "Defaults").
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any


class ThreadsPolicy(StrEnum):
    CLIENTS = "clients"
    FIXED = "fixed"
    PAIRS = "pairs"


class Order(StrEnum):
    INTERLEAVED = "interleaved"
    SEQUENTIAL = "sequential"


class LevelOrder(StrEnum):
    GIVEN = "given"
    SHUFFLED = "shuffled"


class QueryMode(StrEnum):
    SIMPLE = "simple"
    EXTENDED = "extended"
    PREPARED = "prepared"


class Combine(StrEnum):
    SUM = "sum"
    MEASURED = "measured"


class Role(StrEnum):
    MEASURED = "measured"
    BACKGROUND = "background"


# A workload's query mode when it names none: pgbench's own default.
QUERY_MODE_DEFAULT = QueryMode.SIMPLE
# A job's `client` naming the agent's configured pgbench rather than a version's.
CLIENT_CONFIGURED = "configured"
MAX_LEVELS = 64
MAX_CLIENTS = 100000
MAX_DURATION_S = 86400
MAX_WARMUP_S = 3600
MAX_REPEATS = 100
BIGINT_MAX = 2**63 - 1
# The warm-up a job without `warmup_s` gets: 10% of the measurement, at least 2 s (a cold server
# reaches steady tps within a couple of seconds at small scales) and at most 30 s (long runs
# need no longer warm-up than that to fill shared buffers at the scales the catalog uses).
WARMUP_SHARE = 0.1
WARMUP_MIN_S = 2.0
WARMUP_MAX_S = 30.0
SEED_BOUND = 2**31


@dataclass(frozen=True)
class Spec:
    """How a plan field reads from JSON: `kind` (count: a whole number, levels: a list of client
    levels, seconds: a number of seconds, choice: one of `choices`, text, level_counts and
    level_seconds: objects keyed by client level, settings: names to strings), its bounds and
    what the API's schema says of it. `required` fields have no default."""

    kind: str
    help: str = ""
    minimum: float = 1
    maximum: float | None = None
    choices: type[StrEnum] | None = None
    required: bool = False
    nullable: bool = True


def _spec(kind: str, help: str = "", **bounds: Any) -> dict[str, Spec]:
    return {"spec": Spec(kind, help, **bounds)}


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What a job measures and how, for every version it names. Durations in seconds."""

    scale: int | None = field(default=None, metadata=_spec("count", "pgbench -s"))
    clients: tuple[int, ...] = field(
        default=(),
        metadata=_spec("levels", "client levels, pgbench -c", maximum=MAX_CLIENTS, required=True),
    )
    profile_clients: int | None = field(
        default=None,
        metadata=_spec(
            "count",
            "the level whose CPU profile the agent takes (one of clients); null: the largest level",
        ),
    )
    threads_policy: ThreadsPolicy = field(
        default=ThreadsPolicy.CLIENTS,
        metadata=_spec("choice", choices=ThreadsPolicy, nullable=False),
    )
    threads: int | None = field(
        default=None, metadata=_spec("count", "pgbench -j under the fixed policy")
    )
    level_threads: Mapping[int, int] = field(
        default_factory=dict,
        metadata=_spec(
            "level_counts", "pgbench -j of each level under the pairs policy", maximum=10000
        ),
    )
    duration_s: float | None = field(
        default=None,
        metadata=_spec("seconds", "pgbench -T of each level and repeat", maximum=MAX_DURATION_S),
    )
    level_durations: Mapping[int, float] = field(
        default_factory=dict,
        metadata=_spec(
            "level_seconds",
            'pgbench -T of some levels, seconds: {"2048": 360}; the others take duration_s',
            maximum=MAX_DURATION_S,
        ),
    )
    transactions_per_client: int | None = field(
        default=None, metadata=_spec("count", "pgbench -t", maximum=BIGINT_MAX)
    )
    warmup_s: float | None = field(
        default=None,
        metadata=_spec(
            "seconds",
            "warm-up before each measurement, s; omitted: 10% of duration_s within [2, 30]; "
            "0: none",
            minimum=0,
            maximum=MAX_WARMUP_S,
        ),
    )
    level_order: LevelOrder = field(
        default=LevelOrder.GIVEN, metadata=_spec("choice", choices=LevelOrder, nullable=False)
    )
    shuffle_seed: int | None = field(
        default=None,
        metadata=_spec(
            "count",
            "the seed of a shuffled level order; omitted: the server draws one",
            minimum=0,
            maximum=BIGINT_MAX,
        ),
    )
    repeats: int = field(default=1, metadata=_spec("count", maximum=MAX_REPEATS, nullable=False))
    config_overrides: Mapping[str, str] = field(
        default_factory=dict, metadata=_spec("settings", maximum=500)
    )
    client: str = field(
        default="",
        metadata=_spec(
            "text",
            "pgbench client for every server of the job: omitted, the newest the host has or "
            f"builds for the job; '{CLIENT_CONFIGURED}', the agent's own; or a version (one of "
            "the job's, or one the host has installed with pgbench and psql)",
            maximum=100,
            nullable=False,
        ),
    )
    order: Order = field(
        default=Order.INTERLEAVED, metadata=_spec("choice", choices=Order, nullable=False)
    )


PLAN_SPECS: dict[str, Spec] = {f.name: f.metadata["spec"] for f in fields(Plan)}
PLAN_FIELDS: tuple[str, ...] = tuple(PLAN_SPECS)
# The plan fields each run records (its upload carries them; the server's Run has a column of
# each); the overrides travel with the run's configuration.
RUN_PLAN_FIELDS = (
    "scale",
    "clients",
    "duration_s",
    "level_durations",
    "transactions_per_client",
    "repeats",
    "warmup_s",
    "shuffle_seed",
)


def plan_json(value: Any) -> Any:
    """A plan field's value as JSON has it: level maps keyed by strings, tuples as lists."""
    if isinstance(value, Mapping):
        return {str(key): item for key, item in value.items()}
    return list(value) if isinstance(value, tuple) else value


def plan_default(name: str) -> Any:
    """The default of plan field `name` (a fresh value for a mapping)."""
    return getattr(Plan(), name)


def warmup_default(duration_s: float | None) -> float:
    """The warm-up of a job that sets none: 10% of its duration within [2 s, 30 s]; a job
    that runs -t (no duration) gets the minimum."""
    if duration_s is None:
        return WARMUP_MIN_S
    return min(WARMUP_MAX_S, max(WARMUP_MIN_S, WARMUP_SHARE * duration_s))


def shuffle_seed_draw() -> int:
    """The seed of a shuffled level order that names none."""
    return random.SystemRandom().randrange(SEED_BOUND)


def plan_method(
    *, duration_s: float | None, warmup_s: float | None, level_order: str, seed: int | None
) -> tuple[float, int | None]:
    """The warm-up and the shuffle seed a plan runs with: decided once (the server stores them
    on the job, so the claim, the runs and a rerun carry the same numbers). A given order has no
    seed; a shuffle without one draws it."""
    warmup = warmup_default(duration_s) if warmup_s is None else warmup_s
    if level_order != LevelOrder.SHUFFLED:
        return warmup, None
    return warmup, shuffle_seed_draw() if seed is None else seed


def plan_problems(plan: Mapping[str, Any]) -> dict[str, str]:
    """The cross-field rules a plan breaks, by the field at fault (empty: none). `plan` holds
    the plan's fields (absent ones take their defaults); keys of its level maps may be ints or
    the strings JSON gives."""
    value = {name: plan.get(name, plan_default(name)) for name in PLAN_FIELDS}
    clients = list(value["clients"])
    # Levels as JSON keys them: the API's level maps have strings for keys, the agent's ints.
    levels = {str(c) for c in clients}
    problems: dict[str, str] = {}
    if (value["duration_s"] is None) == (value["transactions_per_client"] is None):
        problems["duration_s"] = "Give exactly one of duration_s and transactions_per_client."
    if value["threads_policy"] == ThreadsPolicy.FIXED and not value["threads"]:
        problems["threads"] = "A fixed threads policy needs threads."
    if value["threads_policy"] == ThreadsPolicy.PAIRS:
        given = {str(c) for c in value["level_threads"]}
        missing = [c for c in clients if str(c) not in given]
        if missing:
            problems["level_threads"] = (
                f"The pairs policy needs threads for every level; no threads for {missing[:10]}."
            )
    if len(levels) != len(clients):
        problems["clients"] = "Client levels must be unique."
    if value["profile_clients"] is not None and str(value["profile_clients"]) not in levels:
        problems["profile_clients"] = "The profiled level is one of the job's clients."
    problems.update(_level_durations_problems(value, levels))
    max_connections = value["config_overrides"].get("max_connections")
    if max_connections is not None and not str(max_connections).strip().isdigit():
        # The agent raises it to what the streams need, so it must read it as a number.
        problems["config_overrides.max_connections"] = (
            f"Expected a whole number, got {max_connections!r}."
        )
    return problems


def _level_durations_problems(value: Mapping[str, Any], levels: set[str]) -> dict[str, str]:
    durations = value["level_durations"]
    if not durations:
        return {}
    if value["duration_s"] is None:
        return {"level_durations": "Per-level durations need duration_s (not -t)."}
    unknown = [key for key in durations if str(key) not in levels]
    if unknown:
        return {"level_durations": f"Not client levels of the job: {unknown[:10]}."}
    return {}
