"""A job's tablespaces: made in the host's configured directories, used, measured, removed.

A job names tablespaces, never paths: the host owner maps names to directories in the agent's
configuration ([tablespaces], config.py). For each server of the job the agent makes a fresh
subdirectory of each named directory (`benchhub-<job>-<attempt>-v<index>`: two servers of one
major may not share a location), owned by the server's OS user, runs CREATE TABLESPACE there as
the superuser and grants CREATE on it to the job's role. The subdirectories go when the job ends,
or, when the agent was killed, when the next agent starts (the job's work directory lists them).

The evidence of each tablespace is its device (st_dev as major:minor, the mount and the
/proc/diskstats name) and that device's I/O summed over the run's measurements, so a reader can
tell the table's disk from the index's. Stdlib only.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..host.disks import DiskCounters, diskstats_device, mount_for, parse_diskstats
from ..host.reading import read_text
from ..sandbox.account import Account

# The job's work directory lists the tablespace directories it made, so that an agent started
# after one that was killed mid-job removes them (stale_clusters_stop).
RECORD = "tablespaces.made"

# A tablespace name as a job gives it: a plain lower-case identifier, so workload SQL can write
# it unquoted; PostgreSQL reserves the pg_ prefix.
TABLESPACE_NAME = re.compile(r"^(?!pg_)[a-z_][a-z0-9_]{0,62}$")
TABLESPACE_NAME_RULE = (
    "use 1 to 63 lower-case letters, digits and _, starting with a letter or _, and not pg_"
)


class TablespaceError(Exception):
    """A tablespace could not be prepared; the message names it and says why."""


class _Server(Protocol):
    def sql(self, query: str, *, timeout: float = ..., user: str = ..., job: bool = ...) -> str: ...

    @property
    def account(self) -> Account | None: ...


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class DeviceIO:
    """One device's counters summed over the measurements of a run."""

    device: str
    seconds: float = 0.0
    read_bytes: int = 0
    write_bytes: int = 0
    reads: int = 0
    writes: int = 0
    busy_ms: int = 0

    def add(self, before: DiskCounters, after: DiskCounters, seconds: float) -> None:
        self.seconds += seconds
        self.read_bytes += (after.read_sectors - before.read_sectors) * 512
        self.write_bytes += (after.write_sectors - before.write_sectors) * 512
        self.reads += after.reads - before.reads
        self.writes += after.writes - before.writes
        self.busy_ms += after.io_ticks_ms - before.io_ticks_ms

    def figures(self) -> dict[str, float | None]:
        """Rates over the measured seconds, as iostat gives them (%util capped at 100)."""
        if self.seconds <= 0:
            return dict.fromkeys(
                ("read_bytes_per_s", "write_bytes_per_s", "read_iops", "write_iops", "util_pct")
            )
        return {
            "read_bytes_per_s": round(self.read_bytes / self.seconds, 1),
            "write_bytes_per_s": round(self.write_bytes / self.seconds, 1),
            "read_iops": round(self.reads / self.seconds, 2),
            "write_iops": round(self.writes / self.seconds, 2),
            "util_pct": round(min(100.0, self.busy_ms / (self.seconds * 10)), 2),
        }


def device_of(
    path: Path, *, proc: Path = Path("/proc"), sys: Path = Path("/sys")
) -> dict[str, Any]:
    """Where `path` lives: st_dev as major:minor, the mount (point, type, source) that holds
    it and the /proc/diskstats name watched for it ("" on tmpfs or overlay)."""
    st_dev = os.stat(path).st_dev
    mount = mount_for(path, proc=proc)
    return {
        "dev": f"{os.major(st_dev)}:{os.minor(st_dev)}",
        "mount_point": mount.mount_point if mount else "",
        "fstype": mount.fstype if mount else "",
        "source": mount.source if mount else "",
        "device": diskstats_device(path, proc=proc, sys=sys),
    }


@dataclass
class JobTablespaces:
    """The tablespaces of one job: `directories` maps each name the job uses to the host's
    configured directory; `prefix` names the job's subdirectories."""

    directories: dict[str, Path]
    prefix: str
    record: Path | None = None
    proc: Path = Path("/proc")
    sys: Path = Path("/sys")
    made: list[Path] = field(default_factory=list)
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per version index: device name -> its I/O over that run's measurements.
    io: dict[int, dict[str, DeviceIO]] = field(default_factory=dict)

    @classmethod
    def for_job(
        cls,
        *,
        names: tuple[str, ...],
        configured: dict[str, Path],
        prefix: str,
        record: Path | None = None,
    ) -> JobTablespaces:
        """Raises TablespaceError naming a tablespace this host does not configure. `record`
        lists each directory made, for the agent after a killed one (leftovers_remove)."""
        missing = [name for name in names if name not in configured]
        if missing:
            offered = ", ".join(sorted(configured)) or "none"
            raise TablespaceError(
                f"tablespaces {', '.join(missing)} are not configured on this host "
                f"(it offers: {offered}; see [tablespaces] in the agent's configuration)"
            )
        return cls(
            directories={name: configured[name] for name in names}, prefix=prefix, record=record
        )

    def location(self, name: str, index: int) -> Path:
        return self.directories[name] / f"{self.prefix}-v{index}"

    def create(self, server: _Server, *, index: int, role: str | None) -> None:
        """Make the server's subdirectories and its tablespaces; grant CREATE to `role` (None:
        the job runs as the superuser and needs no grant)."""
        account = server.account
        for name in self.directories:
            location = self.location(name, index)
            try:
                location.mkdir(mode=0o700)
                self.made.append(location)
                if self.record is not None:
                    with self.record.open("a", encoding="utf-8") as listed:
                        listed.write(f"{location}\n")
                if account is not None:
                    os.chown(location, account.uid, account.gid)
            except OSError as exc:
                raise TablespaceError(f"tablespace {name}: cannot make {location}: {exc}") from exc
            literal = "'" + str(location).replace("'", "''") + "'"
            # Two calls: psql -c sends "a; b" as one transaction, which CREATE TABLESPACE refuses.
            server.sql(f"CREATE TABLESPACE {_quoted(name)} LOCATION {literal}")
            if role is not None:
                server.sql(f"GRANT CREATE ON TABLESPACE {_quoted(name)} TO {_quoted(role)}")
            if name not in self.devices:
                self.devices[name] = device_of(location, proc=self.proc, sys=self.sys)

    def counters(self) -> dict[str, DiskCounters]:
        """The cumulative counters of every tablespace's device now."""
        listed = read_text(self.proc / "diskstats") or ""
        found: dict[str, DiskCounters] = {}
        for device in {d["device"] for d in self.devices.values() if d["device"]}:
            counters = parse_diskstats(listed, device)
            if counters is not None:
                found[device] = counters
        return found

    def measured(
        self,
        index: int,
        before: dict[str, DiskCounters],
        after: dict[str, DiskCounters],
        seconds: float,
    ) -> None:
        """Add one measurement of version `index` (counters from `counters()` around it)."""
        run = self.io.setdefault(index, {})
        for device, start in before.items():
            if device in after:
                run.setdefault(device, DeviceIO(device)).add(start, after[device], seconds)

    def evidence(self, index: int) -> list[dict[str, Any]]:
        """One entry per tablespace for version `index`'s upload: name, location, device and
        the device's I/O over that run's measurements (null figures: no counters)."""
        run = self.io.get(index, {})
        entries = []
        for name in self.directories:
            device = self.devices.get(name, {})
            io = run.get(device.get("device", ""))
            entries.append(
                {
                    "name": name,
                    "location": str(self.location(name, index)),
                    **device,
                    "measured_s": round(io.seconds, 3) if io else 0.0,
                    **(io.figures() if io else DeviceIO("").figures()),
                }
            )
        return entries

    def remove(self) -> list[str]:
        """Remove every subdirectory made (after the servers stopped); returns the failures."""
        failures = []
        for location in self.made:
            try:
                shutil.rmtree(location)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failures.append(f"{location}: {exc}")
        self.made = [m for m in self.made if m.exists()]
        return failures


def leftovers_remove(record: Path, *, configured: dict[str, Path]) -> list[Path]:
    """Remove the directories a killed agent's job listed in `record`; only a job's own
    subdirectory of a directory still configured is touched. Returns those removed."""
    try:
        listed = record.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    parents = {directory.resolve() for directory in configured.values()}
    removed = []
    for line in listed:
        location = Path(line)
        if location.name.startswith("benchhub-") and location.parent.resolve() in parents:
            shutil.rmtree(location, ignore_errors=True)
            removed.append(location)
    return removed
