"""Host facts as agents report them, and the hardware fingerprint derived from them.

The fingerprint identifies the hardware a number was measured on, so that two hosts with the same
hardware compare and one host whose hardware changed does not compare with its old self. It covers
what decides performance and stays put across reboots: CPU model and topology, NUMA, memory,
storage, filesystem and virtualization. Kernel and OS are software: they are recorded and shown
as differences, but an upgrade does not make a new machine. Memory is rounded to whole GiB because
MemTotal moves by a few MB between kernels and boots on the same hardware.
"""

from typing import Any

from benchhub.digests import canonical_digest

GIB = 1024**3

# Fact name -> type, the closed set the upload accepts; raw facts travel separately.
HARDWARE_FACTS: dict[str, type] = {
    "cpu_model": str,
    "sockets": int,
    "cores": int,
    "threads": int,
    "numa_nodes": int,
    "memory_bytes": int,
    "storage": str,
    "filesystem": str,
    "virtualization": str,
}
SOFTWARE_FACTS: dict[str, type] = {"kernel": str, "os": str}


def _normalised(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in HARDWARE_FACTS:
        value: Any = facts.get(name)
        if isinstance(value, str):
            value = " ".join(value.split()).lower() or None
        if name == "memory_bytes" and value is not None:
            value = round(value / GIB)
        out[name] = value
    return out


def hardware_fingerprint(facts: dict[str, Any]) -> str:
    """SHA-256 hex of the normalised hardware facts; missing facts count as unknown (null)."""
    return canonical_digest(_normalised(facts))


def facts_digest(facts: dict[str, Any], raw: dict[str, Any]) -> str:
    """SHA-256 hex of everything reported, to tell whether a host's facts changed at all."""
    return canonical_digest({"facts": facts, "raw": raw})
