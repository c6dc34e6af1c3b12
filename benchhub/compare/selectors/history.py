"""The History page's read: tps at one client level over time for one series of a host and
workload (history_get), in a fixed number of queries."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max

from benchhub.compare.selectors.comparisons import ComparisonError, runs_compared
from benchhub.compare.selectors.splits import HELD_COLUMNS, held_runs, with_threads
from benchhub.compare.splits import HeldRun, Split, series_splits
from benchhub.hosts.models import Host, host_name_key
from benchhub.results.hooks import runs_tagged
from benchhub.results.models import LevelAggregate, Run

HISTORY_MAX_POINTS = 500
# A history point's columns, read by history_get (with selectors.splits.HELD_COLUMNS).
POINT_COLUMNS = (
    "run_id",
    "run__build__version",
    "run__uuid",
    "tps_median",
    "tps_min",
    "tps_max",
    "samples",
    "run__source",
    "run__invalid",
    "run__config__hash",
)


@dataclass
class HistoryPoint:
    version: str
    started_at: Any
    run_uuid: uuid.UUID
    tps_median: float | None
    tps_min: float | None
    tps_max: float | None
    samples: int
    is_summary: bool
    invalid: bool


@dataclass
class History:
    host: Host
    workload: str
    clients: int
    config_hash: str | None
    configs: list[tuple[str, int]]
    points: list[HistoryPoint]
    latest: Run | None
    # The series is one comparability key (hardware, configuration, workload definition, scale,
    # duration held equal); `keys` lists every key of the host and workload at that level with
    # its number of runs, newest first. `mixed` says the points span several keys (a config
    # asked for by hash, whose runs differ in more than their version).
    key: str | None = None
    keys: list[tuple[str, int]] = field(default_factory=list)
    mixed: int = 0
    # Where the line stops being like with like (compare.splits), oldest first, and what each
    # point holds equal besides its key (selectors.splits.held_runs), in the points' order.
    splits: list[Split] = field(default_factory=list)
    held: list[HeldRun] = field(default_factory=list)


def history_get(
    *,
    host: str,
    workload: str,
    clients: int,
    config: str | None = None,
    key: str | None = None,
    include_invalid: bool = False,
    tags: list[str] | None = None,
) -> History:
    """tps at one client level over time for one series of a host and workload.

    The series is one comparability key: the one starting with `key`, by default the newest
    run's, so runs of another scale, duration, workload definition or hardware never share a
    line. `config` (a configuration hash prefix) asks instead for every run of that
    configuration, which may mix keys: `mixed` then counts them, for the page to say so.
    `configs` and `keys` list the alternatives with their number of runs; `splits` where the
    line stops being like with like (compare.splits). `tags` (review's): only runs carrying
    every one of them are points, and only their keys and configurations are offered. Fixed
    number of queries: host, the configs summary, the keys summary, the points, their host facts
    and builds, the newest run.
    """
    chosen = Host.objects.filter(name_key=host_name_key(host)).first()
    if chosen is None:
        raise ComparisonError("invalid", f"No host named {host!r}.", field="host")
    aggregates = LevelAggregate.objects.filter(
        host=chosen, workload__name=workload, clients=clients
    )
    if not include_invalid:
        aggregates = aggregates.filter(run__invalid=False)
    if tags:
        aggregates = aggregates.filter(run__in=runs_tagged(Run.objects.all(), tags=tags))
    configs = _newest_first(aggregates, "run__config__hash")
    keys = _newest_first(aggregates, "comparability_key")
    if config:
        config_hash = _prefixed(config, [h for h, _ in configs], field="config")
        selected = aggregates.filter(run__config__hash=config_hash)
        chosen_key = None
    else:
        chosen_key = _prefixed(key, [k for k, _ in keys], field="key") if key else None
        chosen_key = chosen_key or (keys[0][0] if keys else None)
        selected = aggregates.filter(comparability_key=chosen_key)
    # The points as plain columns: a model instance per point, with its run's configuration and
    # host facts (JSON of hundreds of settings each), was most of the page's time at 300 points.
    # Only the newest run, which the caption describes, is read whole, by its id.
    rows = list(
        with_threads(selected)
        .order_by("-run__started_at", "-run__id")
        .values_list(*POINT_COLUMNS, *HELD_COLUMNS, named=True)[:HISTORY_MAX_POINTS]
    )
    rows.reverse()
    held = held_runs(rows)
    splits = series_splits(rows, held, clients=clients)
    points = [
        HistoryPoint(
            version=row.run__build__version,
            started_at=row.run__started_at,
            run_uuid=row.run__uuid,
            tps_median=row.tps_median,
            tps_min=row.tps_min,
            tps_max=row.tps_max,
            samples=row.samples,
            is_summary=row.run__source == Run.Source.SUMMARY,
            invalid=row.run__invalid,
        )
        for row in rows
    ]
    newest = rows[-1] if rows else None
    latest = runs_compared(include_invalid=True).get(pk=newest.run_id) if newest else None
    shown_keys = {row.comparability_key for row in rows}
    return History(
        host=chosen,
        workload=workload,
        clients=clients,
        config_hash=newest.run__config__hash if newest else None,
        configs=configs,
        points=points,
        latest=latest,
        key=chosen_key or (newest.comparability_key if newest else None),
        keys=keys,
        mixed=len(shown_keys) if len(shown_keys) > 1 else 0,
        splits=splits,
        held=held,
    )


def _newest_first(aggregates: Any, column: str) -> list[tuple[str, int]]:
    """The values of `column` among `aggregates` with their counts, newest run first."""
    rows = (
        aggregates.values_list(column)
        .annotate(latest=Max("run__started_at"), n=Count("id"))
        .order_by("-latest")
    )
    return [(value, n) for value, _, n in rows]


def _prefixed(prefix: str, values: list[str], *, field: str) -> str:
    found = next((v for v in values if v.startswith(prefix)), None)
    if found is None:
        raise ComparisonError("invalid", f"No {field} {prefix!r} in this series.", field=field)
    return found
