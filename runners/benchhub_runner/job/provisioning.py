"""A job's servers and client before anything runs: the host's huge pages and limits checked,
each version built from its recipe or provisioned, and one pgbench client chosen for all."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
from pathlib import Path

from ..build import Build, BuildError, BuildProgress, BuildSpec, BuildStopped, ensure_build
from ..measure import pgbench
from ..measure.streams import ConnectionsShort, max_connections_for, nofile_needed
from ..servers.bindirs import CLIENT_TOOLS, has_tools
from ..servers.hugepages import HugePagesShort, host_huge_pages, huge_pages_check, wants_huge_pages
from ..servers.installation import Installation, ProvisionError
from ..servers.provision import provision
from .errors import Interrupted, StageError, failure_message
from .state import JobState

logger = logging.getLogger(__name__)

BUILD_PROGRESS_KEYS = ("build_stage", "compiled", "elapsed_s")


def choose_client(state: JobState, installations: list[Installation]) -> Path:
    """One pgbench (and psql) for every server of the job, so that the client never differs
    between the versions compared: the job's pin (`configured`, or a version: one of the
    job's, else one this host provides), or by default the newest of the agent's configured
    client and the job's own installations (a build from source has both programs; prebuilt
    servers have neither). Ties go to the configured client."""
    pin, configured = state.job.client, state.config.client_bindir
    if pin == "configured":
        candidates = [configured]
    elif pin:
        candidates = [
            i.bindir for v, i in zip(state.job.versions, installations, strict=True) if v == pin
        ]
        candidates = candidates or [provision_version(state, pin).bindir]
    else:
        candidates = [configured, *(i.bindir for i in installations)]
    usable = [b for b in dict.fromkeys(candidates) if b is not None and has_tools(b, CLIENT_TOOLS)]
    if not usable:
        wanted = f"the job's client {pin}" if pin else "the agent's client_bindir"
        raise StageError(
            "provision",
            f"no pgbench client: {wanted} ({', '.join(str(c) for c in candidates)}) lacks "
            "pgbench or psql; set client_bindir in the agent's configuration",
        )
    versions = {bindir: pgbench.client_version(bindir) for bindir in usable}
    chosen = max(usable, key=versions.__getitem__)
    logger.info("pgbench client: %s (%s)", chosen, ".".join(map(str, versions[chosen])))
    return chosen


def provision_version(state: JobState, version: str) -> Installation:
    config = state.config
    try:
        return provision(
            version,
            known=config.installations,
            cache_dir=config.cache_dir,
            allow_download=config.allow_download,
            registry=config.npm_registry,
        )
    except ProvisionError as exc:
        raise StageError("provision", str(exc)) from exc


def build_version(state: JobState, version: str, spec: BuildSpec) -> Build:
    """The installation of a recipe version: built now, or reused from the install cache.
    StageError "build" (the build's own stage and log tail in the message) on failure."""
    state.update(stage="build", version=version, line=f"building {spec.name}")

    def progress(update: BuildProgress) -> None:
        state.update(
            stage="build",
            version=version,
            build_stage=update.stage,
            line=update.line,
            compiled=update.compiled,
            elapsed_s=round(update.elapsed_s, 1),
        )

    try:
        build = ensure_build(
            spec,
            cache_dir=state.config.cache_dir,
            settings=state.config.build,
            progress=progress,
            stop=state.stop,
        )
    except BuildStopped as exc:
        raise Interrupted(str(exc)) from exc
    except BuildError as exc:
        raise StageError("build", failure_message(f"{version}: {exc}")) from exc
    state.builds.append(build)
    state.progress = {k: v for k, v in state.progress.items() if k not in BUILD_PROGRESS_KEYS}
    logger.info(
        "%s: %s %s", version, "reusing" if build.reused else "built", build.installation.bindir
    )
    return build


def check_huge_pages(state: JobState) -> None:
    """With `huge_pages = on`, the host's free huge pages against the servers' estimated
    need, before any build, initdb or server: StageError at provision naming the number to
    reserve. Servers of a job run one at a time, so one server's need is the job's."""
    job = state.job
    overrides = {k.lower(): str(v) for k, v in job.config_overrides.items()}
    if not wants_huge_pages(overrides):
        return
    requested = overrides.get("max_connections")
    try:
        limit = max_connections_for(
            job.workload, job.clients, int(requested) if requested else None
        )
        meminfo = Path("/proc/meminfo").read_text(encoding="utf-8")
        huge_pages_check(overrides, max_connections=limit.value, host=host_huge_pages(meminfo))
    except (HugePagesShort, ConnectionsShort, ValueError, OSError) as exc:
        raise StageError("provision", str(exc)) from exc


def limits(state: JobState, requested: int | None) -> int:
    """max_connections for the servers and the agent's open-file limit, raised as needed.

    The cluster writes max_connections in its base configuration. A job's override is kept
    as given (StageError at initdb when the streams' peak does not fit in it); without one,
    the default is raised to what the streams need (thousands of idle connections) and
    `client_limits` says so (`max_connections_raised_from`). The open-file limit is raised
    so a workload never fails for want of a file descriptor.
    """
    workload, levels = state.job.workload, state.job.clients
    try:
        limit = max_connections_for(workload, levels, requested)
    except ConnectionsShort as exc:
        raise StageError("initdb", str(exc)) from exc
    soft, hard = raise_nofile(nofile_needed(workload, levels))
    state.client_limits = {
        "max_connections": limit.value,
        "nofile_soft": soft,
        "nofile_hard": hard,
    }
    if limit.raised_from is not None:
        # Said on the run page: the server differs from the default because the agent chose.
        state.client_limits["max_connections_raised_from"] = limit.raised_from
    return limit.value


def raise_nofile(needed: int) -> tuple[int, int]:
    """Raise this process's open-file limit (inherited by pgbench) to `needed` if it is lower.

    The soft limit goes up to the hard one; as root the hard one goes up too. Returns the limits
    in force afterwards, which the run records.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target_hard = max(hard, needed) if os.geteuid() == 0 else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, target_hard), target_hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)
