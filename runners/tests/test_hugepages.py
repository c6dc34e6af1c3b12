"""huge_pages = on: the agent checks the host's reservation before anything runs, and says how
many huge pages to reserve."""

from __future__ import annotations

import pytest

from benchhub_runner.servers.hugepages import (
    MB,
    HostHugePages,
    HugePagesShort,
    host_huge_pages,
    huge_pages_check,
    shared_memory_estimate,
    size_bytes,
    wants_huge_pages,
)

MEMINFO = """MemTotal:       395000000 kB
AnonHugePages:         0 kB
HugePages_Total:    9000
HugePages_Free:     8000
HugePages_Rsvd:        0
Hugepagesize:       2048 kB
"""
# The E5 post: shared_buffers 16GB, max_connections 10000.
E5 = {"huge_pages": "on", "shared_buffers": "16GB", "max_connections": "10000"}


def test_it_reads_the_hosts_huge_pages():
    assert host_huge_pages(MEMINFO) == HostHugePages(page_kb=2048, total=9000, free=8000)
    assert host_huge_pages("MemTotal: 1 kB\n").page_kb is None


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [("16GB", 8192, 16 * 1024 * MB), ("'512MB'", 8192, 512 * MB), ("16384", 8192, 128 * MB)],
)
def test_it_reads_sizes_as_postgresql_does(value, unit, expected):
    assert size_bytes(value, unit=unit) == expected


@pytest.mark.parametrize(("value", "wanted"), [("on", True), ("'ON'", True), ("try", False)])
def test_only_on_makes_huge_pages_a_condition(value: str, wanted: bool):
    assert wants_huge_pages({"huge_pages": value}) is wanted


def test_the_estimate_is_shared_buffers_plus_wal_buffers_connections_and_the_rest():
    estimate = shared_memory_estimate(E5, max_connections=10000)
    assert estimate == 16 * 1024 * MB + 16 * MB + 10000 * 24 * 1024 + 64 * MB
    # Within a few per cent of what a 16GB server with 10000 connections maps.
    assert 16.3 * 1024 * MB < estimate < 16.6 * 1024 * MB
    more_locks = shared_memory_estimate(
        {**E5, "max_locks_per_transaction": "128"}, max_connections=10000
    )
    assert more_locks - estimate == 10000 * 24 * 1024


def test_it_names_the_number_to_reserve_when_the_host_has_too_few():
    host = host_huge_pages(MEMINFO)
    with pytest.raises(HugePagesShort) as short:
        huge_pages_check(E5, max_connections=10000, host=host)
    needed = -(-shared_memory_estimate(E5, max_connections=10000) // (2048 * 1024))
    message = str(short.value)
    assert f"needs about {needed} huge pages of 2048 kB" in message
    assert "the host has 8000 free (vm.nr_hugepages = 9000)" in message
    # 1000 pages are held elsewhere: the reservation covers them too.
    assert f"sysctl -w vm.nr_hugepages={needed + 1000}" in message


def test_it_passes_a_host_that_reserves_enough_and_refuses_one_without_huge_pages():
    host = HostHugePages(page_kb=2048, total=9000, free=9000)
    assert (
        huge_pages_check(
            {"huge_pages": "on", "shared_buffers": "1GB"}, max_connections=100, host=host
        )
        == 554
    )
    with pytest.raises(HugePagesShort, match="offers no huge pages"):
        huge_pages_check(E5, max_connections=100, host=HostHugePages(None, 0, 0))


def test_it_checks_nothing_without_huge_pages_on():
    # A host without huge pages at all runs a job that only tries them.
    settings = {"huge_pages": "try", "shared_buffers": "16GB"}
    assert huge_pages_check(settings, max_connections=100, host=HostHugePages(None, 0, 0)) is None
