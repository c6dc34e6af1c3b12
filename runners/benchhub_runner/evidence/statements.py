"""Top statements of a measurement from pg_stat_statements, where the build has it.

The module must be preloaded (the cluster's base settings name it when the installation ships
its control file) and the extension created in the benchmark database, in the agent's own schema
(a job may own `public`), and read there by its qualified name. It tracks nothing while the
measured passes run (`track(on=False)`: pg_stat_statements.track = none, and from 14 no query
id computed): its hooks sit in every statement's path, so the top statements come from the
evidence pass of each level (docs/agent.md, Evidence), whose counters are reset just before it
and read just after.
Times are in milliseconds; 13 renamed total_time/mean_time to total_exec_time/mean_exec_time.
"""

from __future__ import annotations

import csv
import io
import time
from typing import Any

from ..servers.cluster import AGENT_SCHEMA, SUPERUSER, Cluster, ClusterError
from ..servers.installation import Installation

MODULE = "pg_stat_statements"
VIEW = f"{AGENT_SCHEMA}.{MODULE}"
TOP = 10
QUERY_CHARS = 2000
# The agent's own statements (reset, snapshots) are not tracked.
UNTRACKED = "SET pg_stat_statements.track = 'none'; "
# What pgbench itself runs before a builtin workload's transactions (unless -n), word for word
# as every version sends it: housekeeping, not the workload, and at a short level it can fill the
# top of the list.
PGBENCH_HOUSEKEEPING = (
    "vacuum pgbench_branches",
    "vacuum pgbench_tellers",
    "truncate pgbench_history",
    "vacuum analyze pgbench_accounts",
)


def in_build(installation: Installation) -> bool:
    """Whether the installation ships pg_stat_statements (its control file and its library)."""
    root = installation.bindir.parent
    controls = [
        root / "share" / sub / "extension" / f"{MODULE}.control" for sub in ("postgresql", "")
    ]
    libraries = [root / "lib" / sub / f"{MODULE}.so" for sub in ("postgresql", "")]
    return any(p.is_file() for p in controls) and any(p.is_file() for p in libraries)


def enable(cluster: Cluster) -> str | None:
    """Create the extension in the benchmark database; returns why it is unavailable, or None."""
    try:
        cluster.sql(
            f"CREATE SCHEMA IF NOT EXISTS {AGENT_SCHEMA}; "
            f"CREATE EXTENSION IF NOT EXISTS {MODULE} SCHEMA {AGENT_SCHEMA}",
            timeout=60,
            user=SUPERUSER,
        )
        cluster.sql(f"SELECT 1 FROM {VIEW} LIMIT 0", timeout=60)  # noqa: S608 (a constant)
    except ClusterError as exc:
        return f"{MODULE} could not be used: {str(exc)[-300:]}"
    return None


# A reload reaches the postmaster by a signal: new sessions see it a moment later.
RELOAD_WAIT_S = 5.0


def track(cluster: Cluster, *, on: bool, version_num: int) -> None:
    """Switch tracking on (the evidence pass) or off (the measured passes), for new sessions.
    ALTER SYSTEM cannot share a transaction, so each setting is its own statement."""
    settings = {f"{MODULE}.track": "top" if on else "none"}
    if version_num >= 140000:
        # pg_stat_statements turns query ids on ("auto"); off, parsing skips the jumbling.
        settings["compute_query_id"] = "auto" if on else "off"
    for name, value in settings.items():
        cluster.sql(f"ALTER SYSTEM SET {name} = '{value}'", timeout=60)
    cluster.sql("SELECT pg_catalog.pg_reload_conf()", timeout=60)
    wanted = settings[f"{MODULE}.track"]
    deadline = time.monotonic() + RELOAD_WAIT_S
    while cluster.sql(f"SHOW {MODULE}.track", timeout=60) != wanted:
        if time.monotonic() > deadline:
            raise ClusterError(f"{MODULE}.track is not {wanted} after the reload")
        time.sleep(0.05)


def reset(cluster: Cluster) -> None:
    cluster.sql(f"{UNTRACKED}SELECT {AGENT_SCHEMA}.{MODULE}_reset()", timeout=60)


def top_query(version_num: int) -> str:
    total, mean = ("total_exec_time", "mean_exec_time")
    if version_num < 130000:
        total, mean = ("total_time", "mean_time")
    # Constants and the version's column names only.
    columns = f"left(query, {QUERY_CHARS}), calls, {total}, {mean}"
    # The SET of UNTRACKED itself is recorded before it takes effect.
    housekeeping = "query NOT IN (" + ", ".join(f"'{q}'" for q in PGBENCH_HOUSEKEEPING) + ")"
    here = (
        "dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) "
        "AND query NOT LIKE 'SET pg_stat_statements.track%'"
    )
    select = (
        f"SELECT {columns} FROM {VIEW} WHERE {here} AND {housekeeping} "  # noqa: S608
        f"ORDER BY {total} DESC LIMIT {TOP}"
    )
    return f"COPY ({select}) TO STDOUT WITH (FORMAT csv)"


def top(cluster: Cluster, *, version_num: int) -> list[dict[str, Any]]:
    """The evidence's `statements`: the top statements by total time since the reset."""
    out = cluster.sql(UNTRACKED + top_query(version_num), timeout=60)
    return [
        {
            "query": query[:QUERY_CHARS],
            "calls": int(calls),
            "total_ms": round(float(total), 3),
            "mean_ms": round(float(mean), 4),
        }
        for query, calls, total, mean in csv.reader(io.StringIO(out))
    ]
