"""Block devices: the mount and the disk that hold a directory (from /proc/self/mountinfo and
/sys/class/block), each disk's facts, and its I/O as /proc/diskstats counts it: cumulative
counters and the rates between two readings (bytes/s, IOPS, %util like iostat's)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .reading import read_int, read_text


@dataclass(frozen=True)
class Mount:
    mount_point: str
    major: int
    minor: int
    fstype: str
    source: str
    options: str


def parse_mountinfo(text: str) -> list[Mount]:
    """/proc/self/mountinfo lines; paths keep the kernel's octal escapes decoded (``\\040``)."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 2:
            continue
        major, _, minor = fields[2].partition(":")
        options = ",".join(dict.fromkeys((fields[5] + "," + (tail[2:] or [""])[0]).split(",")))
        mounts.append(
            Mount(
                mount_point=unescape_mount_path(fields[4]),
                major=int(major),
                minor=int(minor),
                fstype=tail[0],
                source=unescape_mount_path(tail[1]),
                options=options.strip(","),
            )
        )
    return mounts


def unescape_mount_path(path: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), path)


def mount_for(path: Path, *, proc: Path) -> Mount | None:
    """The mount holding ``path``: the longest mount point that prefixes it, the last mounted
    winning on ties (what ``findmnt --target`` does; stat's st_dev would be wrong on btrfs)."""
    target = os.path.realpath(path)
    best: Mount | None = None
    for mount in parse_mountinfo(read_text(proc / "self/mountinfo") or ""):
        mp = mount.mount_point
        inside = target == mp or target.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) >= len(best.mount_point)):
            best = mount
    return best


def block_device_for(path: Path, *, proc: Path = Path("/proc"), sys: Path = Path("/sys")) -> str:
    """Name of the block device (as /proc/diskstats lists it) holding ``path``, or "".

    A partition stays a partition and a device-mapper volume stays ``dm-N``: both are in
    /proc/diskstats with their own counters. Filesystems without a device number (btrfs, zfs)
    fall back to the mount's source when it is a /dev node; overlay and tmpfs give "".
    """
    mount = mount_for(path, proc=proc)
    if mount is None:
        return ""
    if mount.major != 0:
        link = sys / f"dev/block/{mount.major}:{mount.minor}"
        name = Path(os.path.realpath(link)).name if link.exists() else ""
        if name:
            return name
    if mount.source.startswith("/dev/"):
        name = Path(os.path.realpath(mount.source)).name
        return name if (sys / "class/block" / name).exists() else ""
    return ""


def whole_disks(name: str, *, sys: Path) -> list[str]:
    """The physical disks under a device: a partition's parent, a dm/md volume's slaves."""
    node = sys / "class/block" / name
    if (node / "partition").exists():
        return [Path(os.path.realpath(node)).parent.name]
    try:
        slaves = sorted(p.name for p in (node / "slaves").iterdir())
    except OSError:
        slaves = []
    if slaves:
        return [disk for slave in slaves for disk in whole_disks(slave, sys=sys)]
    return [name]


def disk_info(name: str, *, sys: Path) -> dict[str, Any]:
    """One /sys/block entry: model (virtio disks have none, so the driver stands in), size."""
    node = sys / "block" / name
    model = (read_text(node / "device/model") or "").strip()
    if not model and (node / "device/driver").exists():
        model = Path(os.path.realpath(node / "device/driver")).name.removesuffix("_blk")
    scheduler = re.search(r"\[(\S+)\]", read_text(node / "queue/scheduler") or "")
    sectors = read_int(node / "size")
    return {
        "name": name,
        "model": model,
        "rotational": bool(read_int(node / "queue/rotational")),
        # /sys/block/*/size counts 512-byte sectors whatever the device's block size.
        "size_bytes": sectors * 512 if sectors is not None else None,
        "scheduler": scheduler[1] if scheduler else "",
    }


def all_disks(*, sys: Path) -> list[dict[str, Any]]:
    """Every real disk in /sys/block; unused loop, ram and zram devices are noise."""
    try:
        names = sorted(p.name for p in (sys / "block").iterdir())
    except OSError:
        return []
    disks = [disk_info(name, sys=sys) for name in names]
    return [d for d in disks if d["size_bytes"] and not re.match(r"(loop|ram|zram)\d", d["name"])]


def describe_disk(disk: dict[str, Any]) -> str:
    """``"vda virtio 256G ssd"``; the ssd/hdd word is the kernel's rotational flag."""
    size = disk["size_bytes"]
    human = ""
    if size:
        gib = size / 2**30
        human = f"{gib / 1024:.1f}T" if gib >= 1024 else f"{gib:.0f}G"
    kind = "hdd" if disk["rotational"] else "ssd"
    return " ".join(part for part in (disk["name"], disk["model"], human, kind) if part)


@dataclass(frozen=True)
class DiskCounters:
    reads: int
    read_sectors: int
    writes: int
    write_sectors: int
    io_ticks_ms: int


def parse_diskstats(text: str, device: str) -> DiskCounters | None:
    """The device's line of /proc/diskstats; sectors there are always 512 bytes."""
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 14 and f[2] == device:
            return DiskCounters(
                reads=int(f[3]),
                read_sectors=int(f[5]),
                writes=int(f[7]),
                write_sectors=int(f[9]),
                io_ticks_ms=int(f[12]),
            )
    return None


def diskstats_device(data_dir: Path, *, proc: Path, sys: Path) -> str:
    """The /proc/diskstats name to watch for ``data_dir``, or "" (tmpfs, overlay, no /sys).

    A partition is watched as its whole disk: %util is a property of the disk, which the
    partition shares with its neighbours (WAL elsewhere on it still competes). A device-mapper
    volume is watched as itself (``dm-N`` has its own counters and may span several disks).
    """
    name = block_device_for(data_dir, proc=proc, sys=sys)
    if not name:
        return ""
    if (sys / "class/block" / name / "partition").exists():
        name = whole_disks(name, sys=sys)[0]
    listed = read_text(proc / "diskstats") or ""
    if parse_diskstats(listed, name) is None:
        # Not listed under its own name (hidden multipath paths, say): try what lies beneath.
        name = next((d for d in whole_disks(name, sys=sys) if parse_diskstats(listed, d)), "")
    return name


def disk_rates(
    a: DiskCounters | None, b: DiskCounters | None, seconds: float
) -> dict[str, float | None]:
    if a is None or b is None or seconds <= 0:
        return dict.fromkeys(("read_bps", "write_bps", "read_iops", "write_iops", "util"))
    return {
        "read_bps": round((b.read_sectors - a.read_sectors) * 512 / seconds, 1),
        "write_bps": round((b.write_sectors - a.write_sectors) * 512 / seconds, 1),
        "read_iops": round((b.reads - a.reads) / seconds, 2),
        "write_iops": round((b.writes - a.writes) / seconds, 2),
        # io_ticks counts ms with at least one request in flight: busy time, capped like iostat.
        "util": round(min(100.0, (b.io_ticks_ms - a.io_ticks_ms) / (seconds * 10)), 2),
    }
