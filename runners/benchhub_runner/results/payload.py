"""The upload payload of a run (docs/runner-api.md), built from what the agent measured.

The parser's output carries more than the contract (retries per progress line, per-script
figures); only the contract's fields travel, so the server's strict validation never refuses a
run for a field it does not know.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ..jobspec.plan import RUN_PLAN_FIELDS, plan_json
from ..jobspec.spec import JobSpec
from ..parse import InitOutput

if TYPE_CHECKING:
    from .runs import VersionRun

RESULT_FIELDS = (
    "tps",
    "tps_including_connections",
    "transactions",
    "failed_transactions",
    "skipped_transactions",
    "retried_transactions",
    "latency_avg_ms",
    "latency_stddev_ms",
    "initial_connection_time_ms",
)
PROGRESS_FIELDS = ("t", "tps", "latency_ms", "stddev_ms", "failed", "skipped", "lag_ms")
STATEMENT_FIELDS = ("latency_ms", "failures", "retries", "command", "script")
INIT_STEPS = {
    "drop_tables_s": "drop_tables",
    "create_tables_s": "create_tables",
    "generate_s": "generate",
    "vacuum_s": "vacuum",
    "primary_keys_s": "primary_keys",
    "foreign_keys_s": "foreign_keys",
    "total_s": "total",
}
ORIGINS = {"system": "system", "prebuilt": "prebuilt", "configured": "unknown", "built": "source"}


def init_timings(init: InitOutput) -> dict[str, float]:
    """The `pgbench -i` step timings, in seconds, under the contract's names."""
    values = init.to_dict()
    return {name: values[key] for key, name in INIT_STEPS.items() if values.get(key) is not None}


def result_payload(
    *,
    parsed: dict[str, Any],
    clients: int,
    repeat: int,
    threads: int,
    raw_output: str,
    telemetry: list[dict[str, Any]],
    client_bound: bool | None,
    evidence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One result of the upload from a parsed pgbench output (RunOutput.to_dict()), with the
    measurement's `evidence` from inside the server when the agent collected it."""
    result = {name: parsed.get(name) for name in RESULT_FIELDS}
    aborted = bool(parsed.get("aborted"))
    errors = [str(e) for e in parsed.get("errors", [])]
    if not aborted and result["tps"] is None:
        # pgbench finished but gave no figure without connection time: not a valid number.
        aborted = True
        errors.append("pgbench printed no tps excluding connection time")
    result.update(
        clients=clients,
        repeat=repeat,
        threads=parsed.get("threads") or threads,
        aborted=aborted,
        errors=errors,
        raw_output=raw_output,
        telemetry=telemetry,
        client_bound=client_bound,
        progress=[
            {k: p.get(k) for k in PROGRESS_FIELDS}
            for p in parsed.get("progress", [])
            if p.get("t") is not None
        ],
        statements=[{k: s.get(k) for k in STATEMENT_FIELDS} for s in parsed.get("statements", [])],
    )
    if evidence is not None:
        result["evidence"] = evidence
    return result


def server_version_name(reported: str) -> str:
    """`SHOW server_version` as a version name: "15.19 (Debian 15.19-0+deb12u1)" -> "15.19"."""
    return reported.split()[0] if reported.strip() else reported


def build_payload(run: VersionRun) -> dict[str, Any]:
    """The run's build: the server's version and origin, or for a build from a recipe, the
    recipe's name with the resolved commit, the configure flags and the whole provenance."""
    if run.build is None:
        return {
            "version": server_version_name(run.server_version),
            "origin": ORIGINS.get(run.installation.origin, "unknown"),
        }
    provenance = {**run.build.provenance, "reused": run.build.reused}
    return {
        "version": run.requested,
        "origin": "source",
        "commit": str(provenance.get("source", {}).get("commit") or ""),
        "configure_flags": " ".join(provenance.get("configure_flags") or []),
        "provenance": provenance,
    }


def run_status(results: list[dict[str, Any]], *, stopped: bool = False) -> str:
    if stopped:
        return "partial"
    return "aborted" if any(r["aborted"] for r in results) else "completed"


def run_payload(
    *,
    job: JobSpec,
    run: VersionRun,
    host: dict[str, Any],
    finished_at: dt.datetime,
    pgbench_version: str,
    client_limits: dict[str, int] | None = None,
    tablespaces: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The upload of one version's run of a job; `tablespaces` is the evidence of the job's
    tablespaces (benchhub_runner.servers.tablespaces), sent only when it used some."""
    return {
        "run_uuid": run.run_uuid,
        "job": {"id": job.id, "attempt": job.attempt},
        "host": host,
        "build": build_payload(run),
        "configuration": {
            "settings": run.settings,
            "sources": run.sources,
            "overrides": dict(job.config_overrides),
            # The overrides this server's major took under another name, or could not take.
            "translated": dict(run.cluster.settings_plan.translated),
            "not_applied": dict(run.cluster.settings_plan.not_applied),
        },
        # As the server sent it: the server knows a workload by the hash of its definition.
        "workload": job.workload.definition,
        # A given level order has no seed (plan.plan_method).
        **{name: plan_json(getattr(job, name)) for name in RUN_PLAN_FIELDS},
        # Results are appended as they are measured: their order is the order that ran.
        "level_sequence": [[r["clients"], r["repeat"]] for r in run.results],
        "started_at": run.started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "status": run_status(run.results, stopped=run.stopped is not None),
        **({"stopped": dict(run.stopped)} if run.stopped is not None else {}),
        "source": "agent",
        "pgbench_version": pgbench_version,
        "server_version": run.server_version,
        "init": {"output": run.init_output, "timings": run.init_timings},
        "client_limits": dict(client_limits or {}),
        **({"tablespaces": tablespaces} if tablespaces else {}),
        "results": sorted(run.results, key=lambda r: (r["clients"], r["repeat"])),
    }
