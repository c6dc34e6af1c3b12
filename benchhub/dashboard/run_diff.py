"""Two runs side by side: the rows of the diff page, grouped into sections.

Pure code over two loaded runs (with host_facts, build, workload): parameters, hardware (with
sysctl values), server settings from the full SHOW ALL (configs.hashing.settings_diff, each value
with its pg_settings source), and the workload definition. A row says whether it differs, so the
page highlights those and folds the identical ones away.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.template.defaultfilters import filesizeformat

from benchhub.builds.provenance import provenance_rows
from benchhub.configs.hashing import settings_diff
from benchhub.results.models import Run

HARDWARE_FIELDS = (
    ("cpu_model", "CPU"),
    ("sockets", "sockets"),
    ("cores", "cores"),
    ("threads", "threads"),
    ("numa_nodes", "NUMA nodes"),
    ("memory_bytes", "memory"),
    ("storage", "storage"),
    ("filesystem", "filesystem"),
    ("virtualization", "virtualization"),
    ("kernel", "kernel"),
    ("os", "OS"),
    ("fingerprint", "hardware fingerprint"),
)


@dataclass
class Row:
    name: str
    a: str
    b: str
    differs: bool
    a_note: str = ""
    b_note: str = ""


@dataclass
class Section:
    title: str
    rows: list[Row] = field(default_factory=list)

    @property
    def differing(self) -> list[Row]:
        return [row for row in self.rows if row.differs]

    @property
    def identical(self) -> list[Row]:
        return [row for row in self.rows if not row.differs]


def _text(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "\u2013"  # an en dash, as the other pages show a missing value
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _row(name: str, a: Any, b: Any) -> Row:
    return Row(name, _text(a), _text(b), _text(a) != _text(b))


def _length(run: Run) -> str:
    if run.duration_s:
        return f"{run.duration_s:g} s"
    return f"{run.transactions_per_client} transactions per client"


def parameters(a: Run, b: Run) -> Section:
    pairs = [
        ("version", lambda r: r.build.version),
        ("host", lambda r: r.host.name),
        ("scale", lambda r: r.scale),
        ("clients", lambda r: ", ".join(str(c) for c in r.clients)),
        ("duration", _length),
        ("repeats", lambda r: r.repeats),
        ("query mode", lambda r: r.workload.query_mode),
        ("pgbench version", lambda r: r.pgbench_version),
        ("server version", lambda r: r.server_version),
        ("status", lambda r: r.status),
        ("source", lambda r: r.source),
        ("started", lambda r: f"{r.started_at:%Y-%m-%d %H:%M}"),
    ]
    section = Section("Parameters", [_row(name, get(a), get(b)) for name, get in pairs])
    # When they ran always differs and says nothing about comparability.
    section.rows[-1].differs = False
    return section


def hardware(a: Run, b: Run) -> Section:
    fa, fb = a.host_facts, b.host_facts
    rows = []
    for attr, label in HARDWARE_FIELDS:
        va, vb = getattr(fa, attr), getattr(fb, attr)
        if attr == "memory_bytes":
            va, vb = (filesizeformat(v) if v else None for v in (va, vb))
        rows.append(_row(label, va, vb))
    sysctl_a, sysctl_b = fa.sysctl or {}, fb.sysctl or {}
    for name in sorted(set(sysctl_a) | set(sysctl_b)):
        rows.append(_row(f"sysctl {name}", sysctl_a.get(name), sysctl_b.get(name)))
    return Section("Hardware", rows)


def server_settings(a: Run, b: Run) -> Section:
    differing = {name for name, _, _ in settings_diff(a.settings or {}, b.settings or {})}
    src_a, src_b = a.setting_sources or {}, b.setting_sources or {}
    rows = []
    for name in sorted(set(a.settings or {}) | set(b.settings or {})):
        row = _row(name, (a.settings or {}).get(name), (b.settings or {}).get(name))
        row.differs = name in differing
        row.a_note, row.b_note = src_a.get(name, ""), src_b.get(name, "")
        rows.append(row)
    return Section("Settings", rows)


def workload(a: Run, b: Run) -> Section:
    wa, wb = a.workload, b.workload
    fields = ("name", "builtin", "query_mode", "scripts", "setup", "options", "definition_hash")
    return Section("Workload", [_row(f, getattr(wa, f), getattr(wb, f)) for f in fields])


def build(a: Run, b: Run) -> Section:
    """The builds' provenance (from source): commit, patches, flags, compiler, ..."""
    rows_a, rows_b = dict(provenance_rows(a.build)), dict(provenance_rows(b.build))
    labels = list(dict.fromkeys([*rows_a, *rows_b]))
    rows = [_row(label, rows_a.get(label), rows_b.get(label)) for label in labels]
    for row in rows:
        # Build time and date differ between any two builds and say nothing about the build.
        row.differs = row.differs and row.name != "Build time"
    return Section("Build", rows)


def run_diff(a: Run, b: Run) -> list[Section]:
    sections = [parameters(a, b), hardware(a, b), server_settings(a, b), workload(a, b)]
    if a.build.provenance or b.build.provenance:
        sections.insert(1, build(a, b))
    return sections
