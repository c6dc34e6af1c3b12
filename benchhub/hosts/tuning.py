"""Host tuning that changes results, in words: transparent huge pages, huge pages, the CPU
frequency governor and the sysctl values the agent records
(runners/benchhub_runner/host/sysinfo.py).

Pure code over a HostFacts snapshot. The hardware fingerprint leaves these out on purpose (a
host is the same machine after `sysctl -w`), so two runs on one host can differ in them; the run
and host pages list them and a comparison names every one that differs (compare.describe).
"""

from collections.abc import Mapping
from typing import Any, Protocol

from benchhub.digests import canonical_digest


class Facts(Protocol):
    extra: Any
    sysctl: Any


# (label, key in HostFacts.extra); the sysctl values follow, each under its own name.
EXTRA_ITEMS: tuple[tuple[str, str], ...] = (
    ("transparent huge pages", "transparent_hugepage"),
    ("THP defrag", "transparent_hugepage_defrag"),
    ("huge pages reserved", "hugepages_total"),
    ("huge page size", "hugepagesize_kb"),
    ("CPU governor", "cpu_governor"),
)
NOT_RECORDED = "not recorded"


def host_tuning(facts: Facts | None) -> dict[str, str]:
    """Label -> value of each tuning item, in a fixed order: the EXTRA_ITEMS, then every
    recorded sysctl by name. An item the agent could not read (a container, a VM without
    cpufreq) reads "not recorded"."""
    if facts is None:
        return {}
    extra: Mapping[str, Any] = facts.extra if isinstance(facts.extra, Mapping) else {}
    found = {label: _text(extra.get(key)) for label, key in EXTRA_ITEMS}
    size, total = extra.get("hugepagesize_kb"), extra.get("hugepages_total")
    if size is not None:
        found["huge page size"] = f"{size} kB"
    if isinstance(size, int) and isinstance(total, int):
        # What a server with huge_pages = on can map: the agent checks it against a job's need.
        found["huge pages reserved"] = (
            f"{total} (vm.nr_hugepages; {total * size / 1024**2:.1f} GiB)"
        )
    sysctl: Mapping[str, Any] = facts.sysctl if isinstance(facts.sysctl, Mapping) else {}
    found.update({name: _text(sysctl[name]) for name in sorted(sysctl)})
    return found


def tuning_differences(tunings: list[tuple[str, dict[str, str]]]) -> list[str]:
    """For (label, host_tuning) pairs, the baseline first: one line per item whose value
    differs from the baseline's, naming both values."""
    if len(tunings) < 2:
        return []
    base_label, base = tunings[0]
    lines = []
    for label, tuning in tunings[1:]:
        for item in [*base, *(k for k in tuning if k not in base)]:
            a, b = base.get(item, NOT_RECORDED), tuning.get(item, NOT_RECORDED)
            if a != b:
                lines.append(f"{label}: {item} = {b} (baseline {base_label}: {a})")
    return lines


def tuning_digest(tuning: dict[str, str]) -> str:
    """A short fingerprint, equal for equal tunings (the banner's value column; the details
    name the items)."""
    if not tuning:
        return NOT_RECORDED
    return canonical_digest(tuning)[:8]


def _text(value: Any) -> str:
    if value is None or value == "":
        return NOT_RECORDED
    return str(value)
