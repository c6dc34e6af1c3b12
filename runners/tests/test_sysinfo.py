"""Host facts from fixture trees (this machine's captured files, and a hand-written E5 host) and
from the live machine."""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

from benchhub_runner.host import disks, sysinfo

FIXTURES = Path(__file__).parent / "fixtures" / "sysinfo"
LIVE = FIXTURES / "live-kvm-docker"
E5 = FIXTURES / "e5-kvm-2socket"


def fake_runner(tree: Path, *, lscpu: bool = True, detect_virt: bool = True):
    """Answers lscpu and systemd-detect-virt from files in the tree; other commands are absent."""

    def run(argv: list[str]) -> str | None:
        if argv == ["lscpu"] and lscpu:
            return (tree / "lscpu.txt").read_text()
        if argv[0] == "systemd-detect-virt" and detect_virt:
            path = tree / f"systemd-detect-virt{argv[1]}.txt"
            return path.read_text() if path.exists() else None
        return None

    return run


def facts_of(tree: Path, *, work_dir: str, **runner_options) -> dict:
    return sysinfo.host_facts(
        work_dir=Path(work_dir),
        proc=tree / "proc",
        sys=tree / "sys",
        etc=tree / "etc",
        root=tree,
        run=fake_runner(tree, **runner_options),
    )


E5_FACTS = {
    "cpu_model": "Intel(R) Xeon(R) Gold 6230R CPU @ 2.10GHz",
    "sockets": 2,
    "cores": 52,
    "threads": 104,
    "numa_nodes": 2,
    "memory_bytes": 395936836 * 1024,
    "storage": "vdb virtio 2.0T ssd",
    "filesystem": "xfs",
    "kernel": "6.1.0-26-amd64",
    "os": "Debian GNU/Linux 12 (bookworm)",
    "virtualization": "kvm",
}


def test_it_reads_the_e5_host_from_lscpu():
    host = facts_of(E5, work_dir="/srv/pg data/14/main", detect_virt=False)

    assert host["facts"] == E5_FACTS
    assert host["lscpu"] == (E5 / "lscpu.txt").read_text()
    assert host["sysctl"] == {
        "kernel.sem": "250 32000 32 128",
        "vm.swappiness": "1",
        "vm.nr_hugepages": "8400",
    }
    extra = host["extra"]
    assert extra["numa"] == {"node0": "0-25,52-77", "node1": "26-51,78-103"}
    assert extra["transparent_hugepage"] == "never"
    assert extra["transparent_hugepage_defrag"] == "never"
    assert (extra["hugepages_total"], extra["hugepages_free"], extra["hugepagesize_kb"]) == (
        8400,
        120,
        2048,
    )
    assert extra["mount_options"] == "rw,noatime,attr2,inode64,logbufs=8,logbsize=32k,noquota"
    assert extra["cpu_governor"] == ""
    assert extra["disks"] == [
        {"name": "dm-0", "model": "", "rotational": False, "size_bytes": 4294965248 * 512,
         "scheduler": ""},
        {"name": "vda", "model": "virtio", "rotational": True, "size_bytes": 104857600 * 512,
         "scheduler": "mq-deadline"},
        {"name": "vdb", "model": "virtio", "rotational": False, "size_bytes": 4294967296 * 512,
         "scheduler": "mq-deadline"},
    ]  # fmt: skip


def test_it_derives_the_same_topology_without_lscpu():
    host = facts_of(E5, work_dir="/srv/pg data/14/main", lscpu=False, detect_virt=False)

    # Without CPUID's vendor (lscpu) only DMI is left, and it names the machine type QEMU.
    assert host["facts"] == {**E5_FACTS, "virtualization": "qemu"}
    assert host["lscpu"] == ""
    assert host["extra"]["numa"] == {"node0": "0-25,52-77", "node1": "26-51,78-103"}


def test_it_fills_what_lscpu_leaves_out_from_proc_and_sys():
    def run(argv: list[str]) -> str | None:
        return "CPU(s): 104\nSocket(s): -\nModel name: Xeon\n" if argv == ["lscpu"] else None

    host = sysinfo.host_facts(
        work_dir=Path("/"), proc=E5 / "proc", sys=E5 / "sys", etc=E5 / "etc", root=E5, run=run
    )

    facts = host["facts"]
    assert (facts["cpu_model"], facts["sockets"], facts["cores"]) == ("Xeon", 2, 52)
    assert (facts["threads"], facts["numa_nodes"]) == (104, 2)


def test_it_resolves_a_partition_to_its_disk():
    host = facts_of(E5, work_dir="/var/lib/postgresql", detect_virt=False)

    assert host["facts"]["storage"] == "vda virtio 50G hdd"
    assert host["facts"]["filesystem"] == "ext4"
    assert host["extra"]["mount_options"] == "rw,relatime,errors=remount-ro"
    assert disks.block_device_for(Path("/var/lib"), proc=E5 / "proc", sys=E5 / "sys") == "vda1"
    assert disks.block_device_for(Path("/srv/pg data"), proc=E5 / "proc", sys=E5 / "sys") == (
        "dm-0"
    )


def test_it_reads_this_machines_captured_files():
    host = facts_of(LIVE, work_dir="/work")

    facts = host["facts"]
    assert facts == {
        "cpu_model": "AMD EPYC",
        "sockets": 1,
        "cores": 2,
        "threads": 2,
        "numa_nodes": 1,
        "memory_bytes": 24684092 * 1024,
        "storage": "vda virtio 256G hdd",
        "filesystem": "ext4",
        "kernel": "6.18.44-fc-v657",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "virtualization": "docker",
    }
    assert host["sysctl"]["kernel.sem"] == "32000 1024000000 500 32000"
    assert "kernel.sched_migration_cost_ns" not in host["sysctl"]
    assert host["extra"]["transparent_hugepage"] == "madvise"
    assert host["extra"]["numa"] == {"node0": "0,1"}
    assert [d["name"] for d in host["extra"]["disks"]] == ["vda"]


def test_it_falls_back_to_files_for_virtualization():
    # Without systemd-detect-virt, /.dockerenv in the captured root still says docker...
    assert facts_of(LIVE, work_dir="/", detect_virt=False)["facts"]["virtualization"] == "docker"
    # ...and the E5 tree has no container marks, so the VM clues decide.
    assert facts_of(E5, work_dir="/", detect_virt=False)["facts"]["virtualization"] == "kvm"


def test_it_reports_nothing_rather_than_raising_on_an_empty_tree(tmp_path):
    host = sysinfo.host_facts(
        work_dir=tmp_path,
        proc=tmp_path / "proc",
        sys=tmp_path / "sys",
        etc=tmp_path / "etc",
        root=tmp_path,
        run=lambda argv: None,
    )

    assert host["facts"] == {
        "cpu_model": "",
        "sockets": None,
        "cores": None,
        "threads": None,
        "numa_nodes": None,
        "memory_bytes": None,
        "storage": "",
        "filesystem": "",
        "kernel": "",
        "os": "",
        "virtualization": "none",
    }
    assert host["lscpu"] == ""
    assert host["sysctl"] == {}
    assert host["extra"]["disks"] == []
    assert host["extra"]["numa"] == {}
    json.dumps(host)


def test_it_tolerates_odd_lscpu_values():
    facts = sysinfo.cpu_facts_from_lscpu("CPU(s): 8\nSocket(s): -\nCore(s) per socket: 4\n")

    assert facts == {
        "cpu_model": "",
        "sockets": None,
        "cores": None,
        "threads": 8,
        "numa_nodes": None,
    }


def test_it_decodes_escaped_mount_points():
    line = "120 26 253:0 / /srv/pg\\040data rw,noatime - xfs /dev/mapper/vg-pg rw,attr2"

    (mount,) = disks.parse_mountinfo(line)

    assert mount.mount_point == "/srv/pg data"
    assert (mount.major, mount.minor, mount.fstype) == (253, 0, "xfs")
    assert mount.options == "rw,noatime,attr2"


def test_it_describes_the_live_host_plausibly():
    host = sysinfo.host_facts(work_dir=Path.cwd())

    facts = host["facts"]
    print(json.dumps(facts, indent=1))
    assert facts["threads"] == os.cpu_count()
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert abs(facts["memory_bytes"] - physical) <= 0.01 * physical
    assert facts["cores"] is None or 1 <= facts["cores"] <= facts["threads"]
    assert facts["kernel"] == os.uname().release
    assert facts["filesystem"]
    assert facts["virtualization"]
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert host["extra"]["nofile_soft"] in (nofile[0], "unlimited")
    assert host["sysctl"]["vm.swappiness"] == Path("/proc/sys/vm/swappiness").read_text().strip()
    json.dumps(host)
