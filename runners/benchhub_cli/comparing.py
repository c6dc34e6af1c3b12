"""Asking the server for a comparison and telling a missing host, workload or version from a
comparison that simply has no verdict yet."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from benchhub_cli.api import Api, Refused
from benchhub_cli.errors import CliError
from benchhub_cli.verdict import Verdict


def versions_query(
    *, host: str, workload: str, versions: list[str], threshold: float | None
) -> dict[str, Any]:
    """The compare API's (and page's) query for versions of a workload on a host, the first
    version the baseline."""
    return {
        "workload": workload, "host": host, "versions": ",".join(versions),
        "baseline": versions[0], "threshold": threshold,
    }  # fmt: skip


def runs_query(*, runs: list[str], threshold: float | None) -> dict[str, Any]:
    return {"runs": ",".join(runs), "threshold": threshold}


def comparison_fetch(api: Api, query: dict[str, Any]) -> Verdict:
    """The comparison for `query`; a host, workload, version or run it cannot find is a
    CliError naming the option."""
    try:
        body = api.get("/api/v1/compare/", **query)
    except Refused as exc:
        # The query's fields are the command's options (host, workload, runs, threshold).
        if exc.fields:
            raise CliError(
                "; ".join(f"--{k}: {' '.join(v)}" for k, v in exc.fields.items())
            ) from None
        raise
    if body.get("missing") or len(body.get("series") or []) < 2:
        _explain_missing(api, query, body)
    shown = {k: v for k, v in query.items() if v is not None}
    if "runs" in query:
        title = f"runs {query['runs']}"
    else:
        title = f"{query['workload']} on {query['host']}"
    return Verdict(body=body, permalink=api.page_url(f"/compare/?{urlencode(shown)}"), title=title)


def _explain_missing(api: Api, query: dict[str, Any], body: dict[str, Any]) -> None:
    missing = ", ".join(body.get("missing") or [])
    if "runs" in query:
        raise CliError(f"--runs: no run {missing or query['runs']} to compare")
    hosts = [h["name"] for h in api.get("/api/v1/hosts/")]
    if query["host"] not in hosts:
        raise CliError(
            f"--host: no host named {query['host']} (hosts: {', '.join(hosts) or 'none'})"
        )
    runs = api.get("/api/v1/runs/", host=query["host"], workload=query["workload"], page_size=1)
    if not runs.get("results"):
        raise CliError(
            f"--workload: no run of workload {query['workload']} on host {query['host']}"
        )
    raise CliError(
        f"versions: no run of {missing or query['versions']} with workload {query['workload']} "
        f"on host {query['host']}"
    )
