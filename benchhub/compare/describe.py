"""How compared runs are told to people: their labels, their hardware, length and workload in
words, and what differs between them besides the version (the differences banner of the Compare
and Experiment pages, the API's "differences"). Pure code over runs already read: no queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from benchhub.builds.provenance import build_facts
from benchhub.builds.versions import VersionError, version_major
from benchhub.configs.hashing import settings_diff
from benchhub.hosts.tuning import (
    EXTRA_ITEMS,
    NOT_RECORDED,
    host_tuning,
    tuning_differences,
    tuning_digest,
)
from benchhub.results.models import Run

if TYPE_CHECKING:
    from benchhub.builds.models import Build
    from benchhub.compare.types import Series
    from benchhub.hosts.models import HostFacts


@dataclass
class Difference:
    """Something other than the version that is not the same in every compared run.

    `values` is (series label, value) per series; `details` holds finer lines, e.g. each
    setting that differs from the baseline's configuration.
    """

    name: str
    values: list[tuple[str, str]]
    details: list[str] = field(default_factory=list)


def series_labels(runs: list[Run]) -> list[str]:
    """Each run's label: its version, with the run's short UUID when the version repeats."""
    versions = [run.build.version for run in runs]
    return [
        f"{run.build.version} ({str(run.uuid)[:8]})"
        if versions.count(run.build.version) > 1
        else run.build.version
        for run in runs
    ]


def hardware_text(run: Run) -> str:
    """The CPU, cores, threads and memory of the host the run was measured on."""
    facts = run.host_facts
    parts = [facts.cpu_model or "unknown CPU"]
    if facts.cores:
        parts.append(f"{facts.cores} cores")
    if facts.threads:
        parts.append(f"{facts.threads} threads")
    if facts.memory_bytes:
        parts.append(f"{facts.memory_bytes / 2**30:.0f} GiB")
    return ", ".join(parts)


def length_text(run: Run) -> str:
    """How long each pgbench ran: seconds, or transactions per client."""
    if run.duration_s:
        longer = ", ".join(f"{float(d):g} s at {c}" for c, d in (run.level_durations or {}).items())
        return f"{run.duration_s:g} s ({longer})" if longer else f"{run.duration_s:g} s"
    if run.transactions_per_client:
        return f"{run.transactions_per_client} transactions per client"
    return "unknown"


def warmup_text(run: Run) -> str:
    """The warm-up before each measurement, as the run recorded it."""
    if run.warmup_s is None:
        return "not recorded"
    return f"{run.warmup_s:g} s" if run.warmup_s else "none"


def workload_text(run: Run) -> str:
    """The workload's name, protocol, options and the short hash of its definition."""
    workload = run.workload
    text = f"{workload.name}, {workload.query_mode} protocol"
    if workload.options:
        text += " " + " ".join(workload.options)
    return f"{text} [{workload.definition_hash[:8]}]"


def tablespace_layout(run: Held) -> str:
    """The tablespaces a run put data in, by name in the job's order (pgbench -i puts the
    tables in the first and the indexes in the last), and how many devices they were on: one
    disk for tables and another for indexes is not the same server as everything on one, and
    neither is the layout of no tablespaces at all. Devices are counted, not named: a device's
    major:minor may change at a reboot, its count does not."""
    spaces = run.tablespaces or []
    if not spaces:
        return "none"
    names = ", ".join(str(space.get("name") or "unnamed") for space in spaces)
    devices = {space.get("dev") or space.get("device") or space.get("name") for space in spaces}
    count = "one device" if len(devices) == 1 else f"{len(devices)} devices"
    return f"{names} on {count}"


# What may differ between compared runs, other than the version: (name, value of a run).
ASPECTS: list[tuple[str, Any]] = [
    ("host", lambda r, s: r.host.name),
    ("hardware", lambda r, s: f"{hardware_text(r)} [{r.host_facts.fingerprint[:8]}]"),
    ("kernel / OS", lambda r, s: f"{r.host_facts.kernel} / {r.host_facts.os}"),
    ("host tuning", lambda r, s: tuning_digest(host_tuning(r.host_facts))),
    ("build", lambda r, s: build_text(build_facts(r.build))),
    ("configuration", lambda r, s: r.config.hash[:12]),
    ("scale", lambda r, s: str(r.scale or "unknown")),
    ("duration", lambda r, s: length_text(r)),
    ("warm-up", lambda r, s: warmup_text(r)),
    ("pgbench client", lambda r, s: r.pgbench_version or "unknown"),
    ("workload", lambda r, s: workload_text(r)),
    ("tablespaces", lambda r, s: tablespace_layout(r)),
    ("threads", lambda r, s: ", ".join(map(str, s.threads)) or "unknown"),
    ("source", lambda r, s: r.source),
]


def client_major(run: Run) -> str:
    """The major of the pgbench client that measured the run ("15.19" -> "15")."""
    try:
        return version_major(run.pgbench_version) if run.pgbench_version else "unknown"
    except VersionError:
        return run.pgbench_version


# What can move tps besides the version and is not in the comparability key (the key holds the
# hardware, configuration, workload, scale and length; a builtin workload's tablespaces are
# given to pgbench -i, not written in its definition): the runs of one version's set, and the
# points of one History line or detected series, agree on each, or the run is left out of the
# set and the line is split. (name, value of a run).
HELD_IN_A_SET: list[tuple[str, Any]] = [
    ("pgbench client", client_major),
    ("kernel", lambda r: r.host_facts.kernel or "unknown"),
    ("warm-up", warmup_text),
    ("tablespaces", tablespace_layout),
    *(
        (label, lambda r, label=label: host_tuning(r.host_facts).get(label, NOT_RECORDED))
        for label, _ in EXTRA_ITEMS
    ),
]
# Held as well when builds are not the compared axis (History and detection, where the version
# moves along the line but how it was compiled must not): a packaged build has none recorded.
BUILD_ITEMS = ("compiler", "configure flags", "CFLAGS")
HELD_WHEN_BUILDS_ARE_NOT_COMPARED: list[tuple[str, Any]] = [
    (f"build {name}", lambda r, name=name: build_facts(r.build).get(name, NOT_RECORDED))
    for name in BUILD_ITEMS
]


class Held(Protocol):
    """What held_values reads of a run: a Run, or a History point (compare.splits.HeldRun)."""

    @property
    def pgbench_version(self) -> str: ...
    @property
    def warmup_s(self) -> float | None: ...
    @property
    def host_facts(self) -> HostFacts: ...
    @property
    def build(self) -> Build: ...
    @property
    def tablespaces(self) -> list[dict[str, Any]]: ...


def held_values(run: Held, *, builds: bool = False) -> list[tuple[str, str]]:
    """(name, value) of `run` for each item of HELD_IN_A_SET, and with `builds` of
    HELD_WHEN_BUILDS_ARE_NOT_COMPARED."""
    items = HELD_IN_A_SET + (HELD_WHEN_BUILDS_ARE_NOT_COMPARED if builds else [])
    return [(name, value(run)) for name, value in items]


def held_differences(run: Held, other: Held, *, builds: bool = False) -> list[str]:
    """What `other` differs in from `run` among what a set holds equal (held_values), each as
    `name other (not run)`: the one test of "like with like" for a compare set, a History line
    and a detected series."""
    mine = held_values(run, builds=builds)
    theirs = held_values(other, builds=builds)
    return [
        f"{name} {b} (not {a})" for (name, a), (_, b) in zip(mine, theirs, strict=True) if a != b
    ]


def threads_difference(clients: int, mine: int | None, theirs: int | None) -> str | None:
    """pgbench's threads at a level, held equal as held_differences holds the rest: the line
    naming the difference, or None when they agree (or one is not recorded)."""
    if mine is None or theirs is None or mine == theirs:
        return None
    return f"threads {theirs} at {clients} clients (not {mine})"


def build_text(facts: dict[str, str]) -> str:
    """A build in a few words: packaged, or from source with what was added to it."""
    if not facts:
        return "a packaged or installed release"
    added = [f"patches {facts['patches']}"] if facts["patches"] != "none" else []
    if facts["configure flags"] != "none":
        added.append(f"configure {facts['configure flags']}")
    if facts["CFLAGS"] != "default":
        added.append(f"CFLAGS {facts['CFLAGS']}")
    return "built from source" + (f" with {'; '.join(added)}" if added else "")


def build_differences(series: list[Series]) -> list[str]:
    """One line per build fact (source, patches, flags, compiler, ...) in which a version's
    build differs from the baseline's."""
    base = series[0]
    base_facts = build_facts(base.run.build)
    lines = []
    for other in series[1:]:
        facts = build_facts(other.run.build)
        if bool(facts) != bool(base_facts):
            lines.append(
                f"{other.label}: {build_text(facts)} (baseline {base.label}: "
                f"{build_text(base_facts)})"
            )
            continue
        for name, value in facts.items():
            if value != base_facts.get(name):
                lines.append(f"{other.label}: {name} = {value} (baseline {base.label}: "
                             f"{base_facts.get(name)})")  # fmt: skip
    return lines


def differences(series: list[Series]) -> list[Difference]:
    """Every aspect in ASPECTS whose value is not the same for all series; for the
    configuration, each setting that differs from the baseline's."""
    found = []
    for name, value_of in ASPECTS:
        values = [(s.label, value_of(s.run, s)) for s in series]
        if len({v for _, v in values}) < 2:
            continue
        details = []
        if name == "configuration":
            base = series[0]
            for other in series[1:]:
                for setting, a, b in settings_diff(
                    base.run.config.settings, other.run.config.settings
                ):
                    details.append(
                        f"{other.label}: {setting} = {b if b is not None else '(default)'} "
                        f"(baseline {base.label}: {a if a is not None else '(default)'})"
                    )
        if name == "build":
            details = build_differences(series)
        if name == "host tuning":
            details = tuning_differences([(s.label, host_tuning(s.run.host_facts)) for s in series])
        found.append(Difference(name=name, values=values, details=details))
    return found
