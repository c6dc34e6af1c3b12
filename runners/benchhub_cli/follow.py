"""Following a queued job until it ends: one progress line (on a terminal, rewritten in place;
otherwise a line each time the stage changes), then the job as it ended. A failed job is exit 4
with its stage and the tail of its message (a build's ends with the build log's last lines:
the rejected hunk of a patch that does not apply)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from benchhub_cli import errors
from benchhub_cli.api import Api, ServerAway
from benchhub_cli.errors import CliError

ENDED = ("done", "failed", "cancelled", "expired")
LOG_TAIL_LINES = 30


def progress_text(job: dict[str, Any]) -> str:
    """The job's state and its agent's last progress in one line."""
    progress = job.get("progress") or {}
    parts = [f"job {job['id']} {job['state']}"]
    if job.get("claimed_host"):
        parts.append(f"on {job['claimed_host']}")
    stage = progress.get("stage")
    if stage:
        parts.append(str(stage))
    if progress.get("build_stage"):
        built = f"build {progress.get('version', '')} {progress['build_stage']}".strip()
        if progress.get("compiled"):
            built += f" ({progress['compiled']} files compiled)"
        parts.append(built)
    if progress.get("step") and progress.get("steps"):
        parts.append(f"step {progress['step']}/{progress['steps']}")
    return ", ".join(parts)


def job_follow(
    api: Api,
    job_id: int,
    *,
    poll_s: float = 2.0,
    patience_s: float = 600.0,
    out: TextIO | None = None,
) -> dict[str, Any]:
    """Poll the job until it ends and return it; a failed, cancelled or expired job raises
    CliError with status 4. The server may be away (restarted, redeployed) for up to
    `patience_s` seconds at a stretch while the job runs on. Ctrl-C leaves the job running and
    raises status 5 with the command that follows it again."""
    stream = out or sys.stderr
    tty, last = stream.isatty(), ""
    away_since: float | None = None
    try:
        while True:
            try:
                job: dict[str, Any] = api.call("GET", f"/api/v1/jobs/{job_id}/")
            except ServerAway as exc:
                away_since = away_since or time.monotonic()
                if time.monotonic() - away_since > patience_s:
                    raise
                line = f"{exc}; trying again (the job runs on)"
            else:
                away_since, line = None, progress_text(job)
            if line != last:
                stream.write(f"\r{line}\x1b[K" if tty else f"{line}\n")
                stream.flush()
                last = line
            if away_since is None and job["state"] in ENDED:
                break
            time.sleep(poll_s)
    except KeyboardInterrupt:
        raise CliError(
            f"\ninterrupted: job {job_id} keeps running ({api.page_url(f'/jobs/{job_id}/')}); "
            f"follow it again with: benchhub wait {job_id}",
            status=errors.INTERRUPTED,
        ) from None
    if tty:
        stream.write("\n")
    if job["state"] != "done":
        raise CliError(failure_text(job, api), status=errors.JOB_FAILED)
    return job


def runs_aggregated(
    api: Api, runs: list[str], *, timeout_s: float = 300.0, poll_s: float = 2.0
) -> list[dict[str, Any]]:
    """The runs as GET /api/v1/runs/<uuid>/ gives them, once the server has aggregated each
    (its worker does so after the upload): a comparison read before then would leave the job's
    runs out."""
    deadline, bodies = time.monotonic() + timeout_s, []
    for uuid in runs:
        while not (run := api.call("GET", f"/api/v1/runs/{uuid}/")).get("aggregated_at"):
            if time.monotonic() > deadline:
                raise CliError(
                    f"the server has not aggregated run {uuid} within {timeout_s:g} s "
                    "(is its Celery worker running?)",
                    status=errors.JOB_FAILED,
                )
            time.sleep(poll_s)
        bodies.append(run)
    return bodies


def failure_text(job: dict[str, Any], api: Api) -> str:
    stage, job_id = job.get("failure_stage") or "-", job["id"]
    message = (job.get("failure_message") or "").rstrip().splitlines()
    tail = "\n".join("  " + line for line in message[-LOG_TAIL_LINES:])
    return f"job {job_id} {job['state']} at stage {stage} ({api.page_url(f'/jobs/{job_id}/')})" + (
        f":\n{tail}" if tail else ""
    )
