"""The sweep: each measurement of the job (a level, a repeat, a version) run on its server
while the OS is sampled, and its result as the upload carries it."""

from __future__ import annotations

import time
from typing import Any

from ..evidence import LevelEvidence
from ..measure.level import Level, LevelRun
from ..measure.streams import StreamFigures, level_figures
from ..measure.telemetry import TelemetrySampler, client_bound
from ..results.payload import result_payload
from ..results.runs import VersionRun
from .state import JobState
from .steps import Step


def measure(state: JobState, step: Step, *, index: int, total: int) -> None:
    run = state.runs[step.series]
    state.update(
        stage=step.stage,
        version=step.version,
        clients=step.clients,
        repeat=step.repeat,
        step=index,
        steps=total,
        line="",
    )
    level = Level(
        clients=step.clients, repeat=step.repeat, threads=state.job.threads_for(step.clients)
    )
    measurement = LevelRun(
        job=state.job,
        cluster=run.cluster,
        target=state.target(run),
        bindir=state.client_bindir,
        client_version=state.client_version,
        work=state.work,
        processes=state.processes,
        on_line=lambda line: on_line(state, line),
        timeout_s=state.config.job_timeout_s,
    )
    with state.stage(step.stage):
        state.switch_to(run)
        measurement.prepare(level)
    evidence = level_evidence(state, run, step)
    tablespaces = state.tablespaces
    disks = tablespaces.counters() if tablespaces is not None else {}
    started = time.monotonic()
    with TelemetrySampler(data_dir=run.cluster.datadir) as sampler, state.stage(step.stage):
        figures = measurement.run(level, watch=sampler.watch, evidence=evidence)
    if tablespaces is not None:
        elapsed = time.monotonic() - started
        tablespaces.measured(step.series, disks, tablespaces.counters(), elapsed)
    state.check_stop()
    run.results.append(
        result(
            state,
            level,
            figures,
            sampler.samples(),
            evidence=evidence.payload() if evidence is not None else None,
        )
    )


def level_evidence(state: JobState, run: VersionRun, step: Step) -> LevelEvidence | None:
    """The measured pass's evidence: statistics and waits, no collector in the server's
    hot path (those run in the level's evidence pass)."""
    if run.evidence is None:
        return None
    return LevelEvidence(
        cluster=run.cluster,
        server=run.evidence,
        log_dir=state.work / "txlog" / f"{step.series}-{step.clients}-{step.repeat}",
        sampling_rate=1.0,
        client_version=state.client_version,
        collectors=False,
    )


def on_line(state: JobState, line: str) -> None:
    if line.startswith("progress:"):
        state.update(line=line)


def result(
    state: JobState,
    level: Level,
    figures: list[StreamFigures],
    samples: list[dict[str, Any]],
    *,
    evidence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    workload = state.job.workload
    explicit = bool(workload.streams)
    parsed = level_figures(figures, combine=workload.combine) if explicit else figures[0].outputs[0]
    measured = [f for f in figures if f.stream.measured]
    client_threads = sum(f.threads or 1 for f in measured for _ in f.outputs)
    payload = result_payload(
        parsed=parsed,
        clients=level.clients,
        repeat=level.repeat,
        threads=measured[0].threads or level.threads,
        raw_output="".join(part for f in measured for part in f.raw),
        telemetry=samples,
        client_bound=client_bound(samples, client_threads=client_threads),
        evidence=evidence,
    )
    if explicit:
        payload["streams"] = [f.to_payload() for f in figures]
    payload["duration_s"] = state.job.duration_for(level.clients)
    return payload
