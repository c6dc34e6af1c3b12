"""A job's servers made ready to measure: one cluster per version, initialised, its settings
and evidence read, its tablespaces made, and the workload's data loaded once."""

from __future__ import annotations

import contextlib
import logging
import os

from ..build import Build
from ..evidence import ServerEvidence, statements
from ..measure import pgbench
from ..measure.streams import substitute, uses_builtin
from ..parse import PgbenchParseError, parse_init_output
from ..results.payload import init_timings
from ..results.runs import VersionRun
from ..sandbox.bubblewrap import Sandbox
from ..sandbox.bubblewrap import probe as sandbox_probe
from ..servers.cluster import SUPERUSER, Cluster, ClusterError, free_port
from ..servers.installation import Installation
from ..servers.tablespaces import RECORD as TABLESPACES_RECORD
from ..servers.tablespaces import JobTablespaces, TablespaceError
from . import cleanup, provisioning
from .errors import StageError
from .state import JobState

logger = logging.getLogger(__name__)


def prepare(state: JobState) -> None:
    """Everything before the first measurement: builds first, then installations, the client,
    and each version's cluster, initialised and loaded."""
    job = state.job
    provisioning.check_huge_pages(state)
    if job.tablespaces:
        try:
            state.tablespaces = JobTablespaces.for_job(
                names=job.tablespaces,
                configured=state.config.tablespaces,
                prefix=f"benchhub-{job.id}-{job.attempt}",
                record=state.work / TABLESPACES_RECORD,
            )
        except TablespaceError as exc:
            raise StageError("provision", str(exc)) from exc
    state.work.mkdir(parents=True, exist_ok=True)
    state.work.chmod(0o755)
    cleanup.confine(state)
    # Every build first: no server of the job runs while PostgreSQL compiles.
    builds: dict[str, Build] = {}
    for version in job.versions:
        state.check_stop()
        spec = job.builds.get(version)
        if spec is not None:
            builds[version] = provisioning.build_version(state, version, spec)
    installations: list[Installation] = []
    for version in job.versions:
        state.check_stop()
        build = builds.get(version)
        if build is None:
            state.update(stage="provision", version=version)
        installations.append(
            build.installation if build else provisioning.provision_version(state, version)
        )
    state.client = bindir = provisioning.choose_client(state, installations)
    state.client_version = pgbench.client_version(bindir)
    for index, (version, installation) in enumerate(zip(job.versions, installations, strict=True)):
        state.check_stop()
        overrides = dict(job.config_overrides)
        requested = overrides.pop("max_connections", None)
        max_connections = provisioning.limits(
            state, int(requested) if requested is not None else None
        )
        with state.stage("initdb"):
            cluster = Cluster(
                installation=installation,
                client_bindir=bindir,
                workdir=state.work / f"v{index}",
                port=free_port(),
                max_connections=max_connections,
                overrides=overrides,
                preload=(statements.MODULE,) if statements.in_build(installation) else (),
                account_name=state.account_name,
                sandbox=job_sandbox(state),
            )
        state.runs[index] = run = VersionRun(
            requested=version, installation=installation, cluster=cluster, build=builds.get(version)
        )
        initialise(state, run, index)


def job_sandbox(state: JobState) -> Sandbox | None:
    """The layout of this attempt's sandboxes (sandbox/bubblewrap.py) when the host can make
    them: the job's directory and its tablespace roots writable (the job's own subdirectories
    there are its account's alone)."""
    if os.geteuid() != 0 or sandbox_probe() is not None:
        return None
    roots = tuple(state.tablespaces.directories.values()) if state.tablespaces else ()
    return Sandbox(writable=(state.work, *roots))


def initialise(state: JobState, run: VersionRun, index: int) -> None:
    with state.stage("initdb"):
        run.cluster.initdb()
    state.switch_to(run)
    with state.stage("setup"):
        run.settings, run.sources = run.cluster.settings()
        run.server_version = run.cluster.server_version()
        if state.db_user != SUPERUSER:
            run.cluster.job_role_create(state.db_user)
        if state.tablespaces is not None:
            try:
                state.tablespaces.create(
                    run.cluster,
                    index=index,
                    role=None if state.db_user == SUPERUSER else state.db_user,
                )
            except TablespaceError as exc:
                raise StageError("setup", str(exc)) from exc
        try:
            run.evidence = ServerEvidence.probe(run.cluster, preloaded=bool(run.cluster.preload))
        except (ClusterError, ValueError) as exc:
            logger.warning("%s: no server evidence: %s", run.requested, exc)
        load(state, run)


def load(state: JobState, run: VersionRun) -> None:
    """The workload's setup SQL, then `pgbench -i` for a builtin workload."""
    state.update(stage="setup", version=run.requested)
    job, timeout = state.job, state.config.job_timeout_s
    largest = max(job.clients)
    for statement in job.workload.setup:
        run.cluster.sql(
            substitute(statement, max_clients=largest),
            timeout=timeout,
            user=state.db_user,
            job=True,
        )
    if uses_builtin(job.workload):
        args = pgbench.init_argv(
            bindir=state.client_bindir,
            target=state.target(run),
            scale=job.scale or 1,
            tablespaces=job.tablespaces,
        )
        init = pgbench.Process(args, account=run.cluster.account, cwd=state.work)
        done = init.wait(timeout_s=timeout)
        run.init_output = done.output
        if done.returncode != 0:
            raise StageError("setup", f"pgbench -i failed:\n{done.output[-2000:]}")
        with contextlib.suppress(PgbenchParseError):
            run.init_timings = init_timings(parse_init_output(done.output))
