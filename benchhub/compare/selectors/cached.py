"""A comparison's computed part kept in the cache (Redis), under a key made of the state of the
runs it comes from (comparison_cached), so that a change to any of them reads as a new key
rather than relying on every write path to invalidate.

What a comparison reads, and where its key finds it (comparison_state, one query):

- the runs: every run whose comparability key is one that a run the selection may take has
  (the workload's runs on the host, or on hosts of its hardware with `same_hardware`; the runs
  named by UUID). That covers the run standing for each version, its set (same build and key),
  and the host's history the verdicts pool in (other builds under the baseline's key). Each run
  gives its id, UUID, row version (PostgreSQL's `xmin`, new at every update from any write
  path), aggregation time and marks (invalid, baseline, unsteady explained); a new run or a
  deleted one changes their list. A run's results, progress, evidence and streams are written
  in the transaction that writes the run; aggregation, the only later write of its results,
  sets the run's `aggregated_at` in its own transaction. The UUID and the times keep the key
  true where transaction ids start again (a database restored into another cluster);
- the review tags of those runs, when the selection asks for tags;
- the host: its id, and its current hardware snapshot (what `same_hardware` matches on);
- retention: the months whose detail was dropped (results.DetailPruning), which the evidence,
  telemetry and progress read;
- the selection itself and what else shapes the answer (threshold, level, sections: `variant`);
- the code: a digest of the project's source and of the versions of Python, Django, NumPy and
  SciPy, read once a process, so that a release with other verdict rules (or other classes to
  unpickle) never reads what an older one stored.

Builds, workloads, configurations, host-facts snapshots and jobs' interleaving order, which a
comparison reads too, are written once and never changed by any service.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
import sys
import zlib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connections, router
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from benchhub.hosts.models import Host, host_name_key
from benchhub.replica import PRIMARY, primary_reads
from benchhub.results.hooks import runs_tagged
from benchhub.results.models import DetailPruning, Run

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The cache's keys start with it (after Django's own prefix): the self-benchmark clears them to
# measure the cold figure.
CACHE_PREFIX = "compare-shown"
# A comparison whose pickled form is larger is computed every time rather than stored: a few
# sets of fifty runs each with their evidence stay well under it.
MAX_CACHED_BYTES = 2 * 1024 * 1024


def comparison_cached(
    *, selection: dict[str, Any], variant: tuple[Any, ...], compute: Callable[[], T]
) -> T:
    """What `compute` returns for the comparison of `selection` (comparison_get's arguments),
    read from the cache when the runs it comes from are as they were when it was stored
    (comparison_state), else computed and stored, pickled and compressed, for
    BENCHHUB_COMPARE_CACHE_S seconds when its pickled form is at most MAX_CACHED_BYTES.
    `variant`: everything besides the selection that shapes the answer (threshold, level,
    sections). Queries: comparison_state's one, then `compute`'s on a miss. A selection that
    names no known host, a cache time of 0 and a cache that does not answer (Redis down) all
    compute; what `compute` raises is raised."""
    if settings.COMPARE_CACHE_S <= 0:
        return compute()
    alias = router.db_for_read(Run)
    state = comparison_state(selection, alias=alias)
    if state is None:
        return compute()
    key = _key(alias, state, selection, variant)
    stored = cache_read(key)
    if stored is not None:
        return pickle.loads(zlib.decompress(stored))  # noqa: S301 - our own cache, written below
    if alias == PRIMARY:
        # The key was read on the primary: a replica that became usable meanwhile may lag
        # behind it, and what it answered would be stored under a newer key than its data.
        with primary_reads():
            value = compute()
    else:
        value = compute()
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(blob) <= MAX_CACHED_BYTES:
        # Compressed, a comparison takes a fifth of the memory Redis shares with the queues.
        cache_write(key, zlib.compress(blob, 1), timeout=settings.COMPARE_CACHE_S)
    return value


def comparison_state(selection: dict[str, Any], *, alias: str = PRIMARY) -> str | None:
    """A digest of everything the comparison of `selection` reads that can change (see the
    module's docstring), in one query on the database `alias`; None when the selection names
    a host that does not exist or neither a host nor runs (the comparison raises then)."""
    taken, host = _taken(selection)
    if taken is None:
        return None
    keys = taken.order_by().values("comparability_key").distinct()
    keys_sql, keys_params = keys.query.sql_with_params()
    tagged, tagged_params = "false", ()
    tags = selection.get("tags") or []
    if tags:
        # Whether the run `r` carries every tag asked for, through the tag filter's own query.
        one = runs_tagged(Run.objects.filter(pk=RawSQL("r.id", ())), tags=tags)
        tagged_sql, tagged_params = one.order_by().values("id").query.sql_with_params()
        tagged = f"EXISTS ({tagged_sql})"
    # Each run under the keys as id, UUID, row version, times and marks (and whether it carries
    # the tags asked for), hashed in the database: one row comes back however many runs the
    # keys hold. The keys as an array, not a subquery: the planner then looks each one up in
    # its index rather than guessing thousands of keys and reading every run.
    statement = f"""
        SELECT count(*),
            md5(string_agg(concat_ws(':', r.id, r.uuid, r.xmin, r.created_at, r.aggregated_at,
                r.invalid, r.baseline, r.unsteady_explained, {tagged}),
                ',' ORDER BY r.id)),
            (SELECT concat_ws(':', h.id, h.current_facts_id) FROM {Host._meta.db_table} h
                WHERE h.name_key = %s),
            (SELECT concat_ws(':', count(*), max(p.pruned_at))
                FROM {DetailPruning._meta.db_table} p)
        FROM {Run._meta.db_table} r
        WHERE r.comparability_key = ANY(ARRAY({keys_sql}))
    """  # noqa: S608 - the table names are ours; the ORM's statements carry their parameters
    with connections[alias].cursor() as cursor:
        cursor.execute(statement, [*tagged_params, host or "", *keys_params])
        count, runs, host_state, pruned = cursor.fetchone()
    if host is not None and host_state is None:
        return None
    return f"{count}/{runs}/{host_state}/{pruned}"


def _taken(selection: dict[str, Any]) -> tuple[QuerySet[Run] | None, str | None]:
    """The runs the comparison of `selection` may take (their comparability keys are those of
    every run it reads; None when the selection names neither runs nor a host), and the host's
    name key."""
    if selection.get("runs"):
        return Run.objects.filter(uuid__in=selection["runs"]), None
    if not (selection.get("host") and selection.get("workload")):
        return None, None
    key = host_name_key(selection["host"])
    hosts = Host.objects.filter(name_key=key)
    placed = Q(host__in=hosts.values("id"))
    if selection.get("same_hardware"):
        placed |= Q(host_facts__fingerprint__in=hosts.values("current_facts__fingerprint"))
    return Run.objects.filter(placed, workload__name=selection["workload"]), key


def _key(alias: str, state: str, selection: dict[str, Any], variant: tuple[Any, ...]) -> str:
    asked = sorted(selection.items())
    database = connections[alias].settings_dict["NAME"]
    text = repr((database, code_digest(), state, asked, variant))
    return f"{CACHE_PREFIX}:{hashlib.sha256(text.encode()).hexdigest()}"


# Besides the project's own source, what computes a comparison and pickles it.
COMPUTED_BY = ("django", "numpy", "scipy")


@functools.cache
def code_digest() -> str:
    """A digest of the project's Python source (tests and migrations left out) and of the
    versions of Python and of COMPUTED_BY, read once a process: a release that computes
    otherwise, or whose classes differ, keys its answers apart from an older one's."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(sys.version.encode())
    for name in COMPUTED_BY:
        digest.update(f"{name}={version(name)}".encode())
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if "tests" in relative.parts or "migrations" in relative.parts:
            continue
        digest.update(str(relative).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def cache_read(key: str) -> Any:
    """What the cache holds under `key`; None when nothing, or when the cache does not answer
    (Redis down): the caller computes, as without a cache."""
    try:
        return cache.get(key)
    except redis.RedisError as exc:
        logger.warning("cache unavailable, computing: %s", exc)
        return None


def cache_write(key: str, value: Any, *, timeout: int) -> None:
    """Keep `value` under `key` for `timeout` seconds; a cache that does not answer keeps
    nothing, and the page answers all the same."""
    try:
        cache.set(key, value, timeout=timeout)
    except redis.RedisError as exc:
        logger.warning("cache unavailable, not stored: %s", exc)
