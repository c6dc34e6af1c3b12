"""Host fact snapshots and the hardware fingerprint."""

import json

from benchhub.hosts.facts import hardware_fingerprint
from benchhub.hosts.models import Host, HostFacts
from benchhub.hosts.services import host_facts_record, host_get_or_create
from benchhub.testing.payloads import host_facts, run_payload


def test_it_keeps_the_fingerprint_through_memory_jitter_and_kernel_upgrades():
    facts = host_facts()["facts"]
    jittered = {
        **facts,
        "memory_bytes": facts["memory_bytes"] - 3 * 1024 * 1024,
        "kernel": "6.1.0-27-amd64",
    }
    assert hardware_fingerprint(jittered) == hardware_fingerprint(facts)


def test_it_changes_the_fingerprint_with_the_hardware():
    facts = host_facts()["facts"]
    assert hardware_fingerprint({**facts, "cores": 16}) != hardware_fingerprint(facts)
    assert hardware_fingerprint({**facts, "filesystem": "ext4"}) != hardware_fingerprint(facts)


def test_it_stores_a_snapshot_only_when_facts_change(db):
    host = host_get_or_create(name="bench-01")
    sent = host_facts()
    first = host_facts_record(host=host, facts=sent["facts"], sysctl=sent["sysctl"])
    again = host_facts_record(host=host, facts=sent["facts"], sysctl=sent["sysctl"])
    changed = host_facts_record(
        host=host, facts=sent["facts"], sysctl={**sent["sysctl"], "vm.swappiness": "60"}
    )
    assert first.pk == again.pk != changed.pk
    assert HostFacts.objects.filter(host=host).count() == 2
    host.refresh_from_db()
    assert host.current_facts_id == changed.pk
    assert first.fingerprint == changed.fingerprint


def test_it_keeps_the_facts_each_run_was_measured_on(agent):
    old = run_payload()
    new = run_payload()
    new["host"]["facts"]["memory_bytes"] *= 2
    for payload in (old, new):
        response = agent.client.post(
            "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
        )
        assert response.status_code == 201
    host = Host.objects.get(name="bench-01")
    first, second = (host.runs.get(uuid=p["run_uuid"]) for p in (old, new))
    assert first.host_facts.memory_bytes * 2 == second.host_facts.memory_bytes
    assert first.comparability_key != second.comparability_key
    assert host.current_facts_id == second.host_facts_id
