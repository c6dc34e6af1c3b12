"""Server statistics over one measurement: snapshots of the cumulative statistics views before
and after, and their differences.

Each view is read whole with `row_to_json`, so whatever columns the major has travel under the
names it gives them (pg_stat_bgwriter lost its checkpoint columns to pg_stat_checkpointer in
17, pg_stat_wal arrived in 14, pg_stat_io in 16); no table of columns per major to keep up.
A view the server lacks is left out of the query and absent from the result. The WAL position
is read on every major (`pg_current_wal_lsn`, `pg_current_xlog_location` before 10).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..servers.cluster import Cluster, ClusterError

# The optional views, by their key in the evidence.
VIEWS = {
    "bgwriter": "pg_stat_bgwriter",
    "checkpointer": "pg_stat_checkpointer",
    "wal": "pg_stat_wal",
    "io": "pg_stat_io",
}
# pg_stat_io has a row per backend type, object and context: its columns are summed.
SUMMED = frozenset({"io"})
# Identifiers and gauges, not counters: their difference means nothing.
NOT_COUNTERS = frozenset({"datid", "numbackends", "op_bytes"})
MAX_KEYS = 100
# Before 15 backends report to the statistics collector at most every 500 ms and readers may
# see a file that old: waiting this long lets the measurement's last counts arrive.
COLLECTOR_DELAY_S = 1.1
BACKENDS_GONE_S = 10.0


@dataclass(frozen=True)
class Server:
    """What the statistics code needs to know about a running server, probed once."""

    version_num: int  # server_version_num: 90624, 130023, 180001
    views: frozenset[str]  # keys of VIEWS the server has


def probe(cluster: Cluster) -> Server:
    # Every name in these queries is one of the module's constants, never outside text.
    names = ",".join(f"'{view}'" for view in VIEWS.values())
    found = "coalesce(string_agg(viewname, ','), '')"
    where = f"schemaname = 'pg_catalog' AND viewname IN ({names})"
    version = "current_setting('server_version_num')"
    query = f"SELECT {version} || '|' || {found} FROM pg_catalog.pg_views WHERE {where}"  # noqa: S608
    out = cluster.sql(query, timeout=60)
    version, _, views = out.strip().partition("|")
    present = set(views.split(","))
    return Server(
        version_num=int(version),
        views=frozenset(key for key, view in VIEWS.items() if view in present),
    )


def snapshot_query(server: Server) -> str:
    lsn = "pg_current_wal_lsn()" if server.version_num >= 100000 else "pg_current_xlog_location()"
    parts = [
        f"'lsn', {lsn}::text",
        "'database', (SELECT row_to_json(v) FROM pg_catalog.pg_stat_database v "
        "WHERE datname = current_database())",
    ]
    for key in sorted(server.views):
        view = VIEWS[key]
        if key in SUMMED:
            parts.append(f"'{key}', (SELECT json_agg(row_to_json(v)) FROM pg_catalog.{view} v)")  # noqa: S608
        else:
            parts.append(f"'{key}', (SELECT row_to_json(v) FROM pg_catalog.{view} v)")  # noqa: S608
    return f"SELECT json_build_object({', '.join(parts)})::text"


def snapshot(cluster: Cluster, server: Server, *, prefix: str = "") -> dict[str, Any]:
    """The views as JSON objects (pg_stat_io as a list of rows) and the WAL position;
    `prefix` is SQL run first in the same session (statements.UNTRACKED)."""
    return dict(json.loads(cluster.sql(prefix + snapshot_query(server), timeout=60)))


def lsn_bytes(lsn: str) -> int:
    """A WAL position ("16/B374D848") as a byte offset."""
    high, _, low = lsn.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


def numeric(row: dict[str, Any] | None) -> dict[str, float]:
    """The counter columns of one row: numbers, not booleans, not identifiers or gauges."""
    return {
        name: value
        for name, value in (row or {}).items()
        if isinstance(value, int | float)
        and not isinstance(value, bool)
        and name not in NOT_COUNTERS
    }


def summed(rows: list[dict[str, Any]] | None) -> dict[str, float]:
    totals: dict[str, float] = {}
    for row in rows or []:
        for name, value in numeric(row).items():
            totals[name] = totals.get(name, 0) + value
    return totals


def difference(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """after - before for the columns both have (floats to 3 decimals: times in ms)."""
    deltas: dict[str, float] = {}
    for name in sorted(after)[:MAX_KEYS]:
        if name in before:
            delta = after[name] - before[name]
            deltas[name] = round(delta, 3) if isinstance(delta, float) else delta
    return deltas


def deltas(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The evidence's `stats`: each view's counter deltas, `wal_bytes` and `checkpoints`."""
    stats: dict[str, Any] = {}
    for key in ("database", *VIEWS):
        if after.get(key) is None:
            continue
        read = summed if key in SUMMED else numeric
        stats[key] = difference(read(before.get(key)), read(after.get(key)))
    stats["wal_bytes"] = max(0, lsn_bytes(after["lsn"]) - lsn_bytes(before["lsn"]))
    stats["checkpoints"] = checkpoints(stats)
    return stats


def checkpoints(stats: dict[str, Any]) -> int | None:
    """Checkpoints during the measurement: 18's num_done where it exists (a timed checkpoint
    with nothing to do is skipped but counted in num_timed), timed plus requested before."""
    checkpointer = stats.get("checkpointer") or {}
    if "num_done" in checkpointer:
        return int(checkpointer["num_done"])
    if "num_timed" in checkpointer:
        return int(checkpointer["num_timed"] + checkpointer.get("num_requested", 0))
    bgwriter = stats.get("bgwriter") or {}
    if "checkpoints_timed" in bgwriter:
        return int(bgwriter["checkpoints_timed"] + bgwriter.get("checkpoints_req", 0))
    return None


def settle(cluster: Cluster, server: Server, *, prefix: str = "") -> None:
    """Wait until the measured clients' backends are gone (they report their last counts as
    they exit), and before 15 for the statistics collector to have them."""
    query = (
        "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name LIKE 'benchhub-%' "
        "AND application_name NOT LIKE 'benchhub-background-%'"
    )
    deadline = time.monotonic() + BACKENDS_GONE_S
    while time.monotonic() < deadline:
        try:
            if int(cluster.sql(prefix + query, timeout=30).strip() or 0) == 0:
                break
        except (ClusterError, ValueError):
            break
        time.sleep(0.1)
    if server.version_num < 150000:
        time.sleep(COLLECTOR_DELAY_S)
