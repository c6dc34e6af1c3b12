"""The five published experiments, as the published experiments' descriptions define them:
which catalog workloads make each one, and what their tables call a workload.

An experiment is a list of catalog ids (workloads.catalog); every workload made from one of
them, whatever its size parameters, belongs to the experiment. The reads behind the pages (what
has been run of them, and the runs of one experiment on one host) are
compare.selectors.experiments'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchhub.workloads.models import Workload


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    description: str
    catalog_entries: tuple[str, ...]
    presentation: str


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        id="e1",
        title="E1. A major version against the previous one, six workloads",
        description=(
            "Primary-key lookup and update, single-row and 400-row inserts, and the same "
            "inserts with one table per connection, swept over client counts with "
            "threads = clients on a tuned host whose data fits in RAM."
        ),
        catalog_entries=(
            "e1-pk-lookup",
            "e1-pk-update",
            "e1-insert",
            "e1-batch-insert",
            "e1-insert-per-table",
            "e1-batch-insert-per-table",
        ),
        presentation=Workload.Presentation.SWEEP,
    ),
    Experiment(
        id="e2",
        title="E2. The cost of idle connections",
        description=(
            "A prepared select-only load of 128 clients measured while thousands of other "
            "connections sit idle in pg_sleep, and a sweep up to 10000 clients with no idle "
            "ones; max_connections raised, everything else default."
        ),
        catalog_entries=("e2-idle-connections", "e2-connection-sweep"),
        presentation=Workload.Presentation.CONNECTIONS,
    ),
    Experiment(
        id="e3",
        title="E3. Random UUID keys against sequential keys",
        description=(
            "Inserts into tables keyed by uuid, text or int8, empty or prefilled, with several "
            "key storage modes and without an index, while the OS shows where the time goes: "
            "CPU iowait and the devices' utilisation and write rate."
        ),
        catalog_entries=("e3-key-insert",),
        presentation=Workload.Presentation.EVIDENCE,
    ),
    Experiment(
        id="e4",
        title="E4. Write and consume at the same time",
        description=(
            "Two pgbench streams at once on a partitioned heap: a writer inserting batches and "
            "a consumer deleting them; each stream's rows per second (tps x batch size) and "
            "latency."
        ),
        catalog_entries=("e4-write-consume",),
        presentation=Workload.Presentation.STREAMS,
    ),
    Experiment(
        id="e5",
        title="E5. A development snapshot against the previous major",
        description=(
            "Read-only and tpcb-like pgbench at 52 to 5000 connections with threads capped as "
            "published (e.g. 208 clients on 104 threads), reported as old tps, new tps and "
            "the improvement in percent."
        ),
        catalog_entries=("e5-read-only", "e5-tpcb-like"),
        presentation=Workload.Presentation.IMPROVEMENT,
    ),
)

BY_ID = {e.id: e for e in EXPERIMENTS}


def model_name(workload: Workload) -> str:
    """What the published tables call a workload: the catalog id without its experiment
    prefix (e5-read-only -> read-only), else the builtin, else the name."""
    match = re.fullmatch(r"e\d-(.+)", workload.catalog_entry or "")
    if match:
        return match.group(1)
    return workload.builtin or workload.name
