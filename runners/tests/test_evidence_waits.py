"""Wait-event shares (the sampling against a real server is in test_evidence.py)."""

from __future__ import annotations

from benchhub_runner.evidence.waits import MAX_EVENTS, shares, waits_query


def test_it_gives_each_event_its_share_of_the_backend_samples():
    assert shares({"CPU": 6, "Lock:transactionid": 3, "LWLock:WALWrite": 1}) == {
        "CPU": 0.6,
        "Lock:transactionid": 0.3,
        "LWLock:WALWrite": 0.1,
    }
    assert shares({}) == {}


def test_it_folds_the_rarest_events_into_other_beyond_the_limit():
    counts = {f"LWLock:e{n}": 100 - n for n in range(80)}

    found = shares(counts)

    assert len(found) == MAX_EVENTS
    assert found["other"] == round(sum(100 - n for n in range(49, 80)) / sum(counts.values()), 4)
    assert "LWLock:e0" in found and "LWLock:e79" not in found


def test_it_counts_client_backends_only_where_the_server_can_tell_them():
    assert "backend_type = 'client backend'" in waits_query(100000)
    assert "backend_type" not in waits_query(90600)
