"""Host facts, collected once per run: CPU topology, memory, storage, kernel, sysctl and limits.

:func:`host_facts` returns the ``host`` object of the upload contract (docs/runner-api.md,
"Upload a run") without ``name``. Everything is read from /proc, /sys and /etc plus two commands
(``lscpu``, ``systemd-detect-virt``); every reader tolerates a missing file or command, as in a
container, and reports the fact as ``None`` or ``""`` instead of raising. The roots and the command
runner are parameters so that tests can point them at captured fixture trees.

Storage (which mount and disk hold a directory, each disk's facts) is :mod:`.disks`.
"""

from __future__ import annotations

import re
import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .disks import (
    Mount,
    all_disks,
    block_device_for,
    describe_disk,
    disk_info,
    mount_for,
    whole_disks,
)
from .reading import parse_colon_pairs, read_text, run_command, to_int

CommandRunner = Callable[[list[str]], str | None]

SYSCTLS = (
    "kernel.sem", "kernel.shmmax", "kernel.shmall", "kernel.shmmni",
    "vm.dirty_background_ratio", "vm.dirty_ratio", "vm.dirty_background_bytes", "vm.dirty_bytes",
    "vm.dirty_expire_centisecs", "vm.dirty_writeback_centisecs", "vm.swappiness",
    "vm.overcommit_memory", "vm.overcommit_ratio", "vm.nr_hugepages", "vm.nr_overcommit_hugepages",
    "vm.hugetlb_shm_group", "vm.min_free_kbytes", "vm.max_map_count", "vm.zone_reclaim_mode",
    "kernel.numa_balancing", "kernel.sched_migration_cost_ns", "kernel.sched_autogroup_enabled",
    "kernel.pid_max", "kernel.threads-max", "fs.file-max", "fs.nr_open", "fs.aio-max-nr",
    "net.core.somaxconn", "net.core.netdev_max_backlog", "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse",
)  # fmt: skip

# DMI sys_vendor / product_name fragments -> the names systemd-detect-virt uses.
DMI_VENDORS = (
    ("kvm", "kvm"), ("qemu", "qemu"), ("vmware", "vmware"), ("virtualbox", "oracle"),
    ("innotek", "oracle"), ("xen", "xen"), ("microsoft corporation", "microsoft"),
    ("amazon ec2", "amazon"), ("google", "google"), ("bochs", "bochs"), ("parallels", "parallels"),
)  # fmt: skip

# --- CPU topology -------------------------------------------------------------------------------


def cpu_facts_from_lscpu(lscpu: str) -> dict[str, Any]:
    """Model, sockets, total physical cores, logical CPUs and NUMA nodes from lscpu's output."""
    pairs = parse_colon_pairs(lscpu)
    sockets = to_int(pairs.get("Socket(s)"))
    per_socket = to_int(pairs.get("Core(s) per socket"))
    return {
        "cpu_model": pairs.get("Model name", ""),
        "sockets": sockets,
        "cores": sockets * per_socket if sockets and per_socket else None,
        "threads": to_int(pairs.get("CPU(s)")),
        "numa_nodes": to_int(pairs.get("NUMA node(s)")),
    }


def numa_cpus_from_lscpu(lscpu: str) -> dict[str, str]:
    """``{"node0": "0-25,52-77", ...}`` from the ``NUMA nodeN CPU(s):`` lines."""
    return {
        f"node{m[1]}": m[2].strip()
        for m in re.finditer(r"^NUMA node(\d+) CPU\(s\):\s*(.*)$", lscpu, re.MULTILINE)
    }


def cpu_facts_from_proc(*, proc: Path, sys: Path) -> dict[str, Any]:
    """The same facts without lscpu: /proc/cpuinfo blocks plus /sys/devices/system/node."""
    blocks = [parse_colon_pairs(b) for b in (read_text(proc / "cpuinfo") or "").split("\n\n")]
    blocks = [b for b in blocks if "processor" in b]
    packages = {b["physical id"] for b in blocks if "physical id" in b}
    cores = {(b.get("physical id"), b["core id"]) for b in blocks if "core id" in b}
    model = next((b.get("model name") or b.get("cpu model") or "" for b in blocks), "")
    nodes = numa_cpus_from_sys(sys=sys)
    return {
        "cpu_model": model,
        "sockets": len(packages) or None,
        "cores": len(cores) or None,
        "threads": len(blocks) or None,
        "numa_nodes": len(nodes) or None,
    }


def cpu_facts(*, lscpu: str, proc: Path, sys: Path) -> dict[str, Any]:
    """lscpu's answers, each missing one filled from /proc and /sys (lscpu leaves out sockets on
    some ARM hosts and NUMA on kernels built without it)."""
    from_proc = cpu_facts_from_proc(proc=proc, sys=sys)
    if not lscpu.strip():
        return from_proc
    from_lscpu = cpu_facts_from_lscpu(lscpu)
    return {k: v if v not in (None, "") else from_proc[k] for k, v in from_lscpu.items()}


def numa_cpus_from_sys(*, sys: Path) -> dict[str, str]:
    node_dir = sys / "devices/system/node"
    try:
        nodes = sorted(p for p in node_dir.iterdir() if re.fullmatch(r"node\d+", p.name))
    except OSError:
        return {}
    return {p.name: (read_text(p / "cpulist") or "").strip() for p in nodes}


# --- Virtualization -----------------------------------------------------------------------------


def detect_container(*, proc: Path, root: Path, run: CommandRunner) -> str:
    answer = (run(["systemd-detect-virt", "--container"]) or "").strip()
    if answer:
        return answer
    if (root / ".dockerenv").exists():
        return "docker"
    if (root / "run/.containerenv").exists():
        return "podman"
    cgroup = read_text(proc / "1/cgroup") or ""
    for marker, name in (("docker", "docker"), ("kubepods", "kubernetes"), ("lxc", "lxc")):
        if marker in cgroup:
            return name
    return "none"


def detect_vm(*, proc: Path, sys: Path, lscpu: str, run: CommandRunner) -> str:
    answer = (run(["systemd-detect-virt", "--vm"]) or "").strip()
    if answer:
        return answer
    cpuinfo = read_text(proc / "cpuinfo") or ""
    if not re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.MULTILINE):
        return "none"
    dmi = " ".join(
        read_text(sys / f"class/dmi/id/{f}") or "" for f in ("sys_vendor", "product_name")
    )
    hypervisor = parse_colon_pairs(lscpu).get("Hypervisor vendor", "")
    # lscpu's vendor comes from CPUID, which tells KVM from plain QEMU; DMI only says "QEMU".
    for clue in (hypervisor.lower(), dmi.lower()):
        for fragment, name in DMI_VENDORS:
            if fragment in clue:
                return name
    return "vm"


# --- Kernel, OS, sysctl, limits -----------------------------------------------------------------


def os_pretty_name(*, etc: Path) -> str:
    text = read_text(etc / "os-release") or ""
    match = re.search(r"^PRETTY_NAME=(.*)$", text, re.MULTILINE)
    return match[1].strip().strip("\"'") if match else ""


def read_sysctls(*, proc: Path, names: tuple[str, ...] = SYSCTLS) -> dict[str, str]:
    """Values under /proc/sys with runs of tabs and spaces collapsed; missing ones skipped."""
    values = {}
    for name in names:
        text = read_text(proc / "sys" / name.replace(".", "/"))
        if text is not None:
            values[name] = " ".join(text.split())
    return values


def selected_choice(text: str | None) -> str:
    """``"always [madvise] never"`` -> ``"madvise"``."""
    match = re.search(r"\[([^\]]+)\]", text or "")
    return match[1] if match else (text or "").strip()


def limit(value: int) -> int | str:
    return "unlimited" if value == resource.RLIM_INFINITY else value


def extra_facts(*, proc: Path, sys: Path, lscpu: str, mount: Mount | None) -> dict[str, Any]:
    """Everything that matters for a result but is not part of the hardware fingerprint.

    The rlimits are this process's: the runner starts pgbench, so they are pgbench's too.
    """
    meminfo = parse_colon_pairs(read_text(proc / "meminfo") or "")
    thp = sys / "kernel/mm/transparent_hugepage"
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)
    governor = read_text(sys / "devices/system/cpu/cpu0/cpufreq/scaling_governor")
    return {
        "transparent_hugepage": selected_choice(read_text(thp / "enabled")),
        "transparent_hugepage_defrag": selected_choice(read_text(thp / "defrag")),
        "hugepages_total": to_int(meminfo.get("HugePages_Total")),
        "hugepages_free": to_int(meminfo.get("HugePages_Free")),
        "hugepagesize_kb": to_int(meminfo.get("Hugepagesize", "").removesuffix("kB").strip()),
        "nofile_soft": limit(nofile[0]),
        "nofile_hard": limit(nofile[1]),
        "nproc_soft": limit(nproc[0]),
        "nproc_hard": limit(nproc[1]),
        "cpu_governor": (governor or "").strip(),
        "numa": numa_cpus_from_lscpu(lscpu) or numa_cpus_from_sys(sys=sys),
        "disks": all_disks(sys=sys),
        "mount_options": mount.options if mount else "",
    }


def memory_bytes(*, proc: Path) -> int | None:
    total = parse_colon_pairs(read_text(proc / "meminfo") or "").get("MemTotal", "")
    kib = to_int(total.removesuffix("kB").strip())
    return kib * 1024 if kib is not None else None


def host_facts(
    *,
    work_dir: Path,
    proc: Path = Path("/proc"),
    sys: Path = Path("/sys"),
    etc: Path = Path("/etc"),
    root: Path = Path("/"),
    run: CommandRunner = run_command,
) -> dict[str, Any]:
    """The upload contract's ``host`` object less ``name``: facts, lscpu, sysctl and extra.

    ``work_dir`` is where PostgreSQL's data lives; storage, filesystem and mount options are
    those of the device holding it. Never raises for a missing file or command.
    """
    lscpu = run(["lscpu"]) or ""
    cpu = cpu_facts(lscpu=lscpu, proc=proc, sys=sys)
    mount = mount_for(work_dir, proc=proc)
    device = block_device_for(work_dir, proc=proc, sys=sys)
    disks = [disk_info(d, sys=sys) for d in whole_disks(device, sys=sys)] if device else []
    container = detect_container(proc=proc, root=root, run=run)
    facts = {
        **cpu,
        "memory_bytes": memory_bytes(proc=proc),
        "storage": ", ".join(describe_disk(d) for d in disks),
        "filesystem": mount.fstype if mount else "",
        "kernel": (read_text(proc / "sys/kernel/osrelease") or "").strip(),
        "os": os_pretty_name(etc=etc),
        # A container on a VM is reported as the container, like systemd-detect-virt does.
        "virtualization": container
        if container != "none"
        else detect_vm(proc=proc, sys=sys, lscpu=lscpu, run=run),
    }
    return {
        "facts": facts,
        "lscpu": lscpu,
        "sysctl": read_sysctls(proc=proc),
        "extra": extra_facts(proc=proc, sys=sys, lscpu=lscpu, mount=mount),
    }
