"""Compare and history choose runs by comparability key, not by workload name alone, and say
so when what they show must mix keys."""

import pytest

from benchhub.compare.selectors import comparison_get, history_get
from benchhub.compare.tests.uploads import upload


def compare(versions):
    return comparison_get(workload="select-only", host="bench-01", versions=versions)


def test_it_compares_the_size_that_every_version_ran(agent):
    small_13 = upload(agent, version="13.3", tps={1: [100]}, started_at="2026-11-01T10:00:00Z")
    # A newer run of 13.3 at another scale: same workload name, another comparability key.
    upload(agent, version="13.3", tps={1: [5]}, scale=10, started_at="2026-11-05T10:00:00Z")
    small_15 = upload(agent, version="15.4", tps={1: [120]}, started_at="2026-11-02T10:00:00Z")

    comparison = compare(["13.3", "15.4"])

    assert [s.run.id for s in comparison.series] == [small_13.id, small_15.id]
    assert comparison.mixed_keys == []


def test_it_says_so_when_the_versions_share_no_key(agent, anon_client):
    upload(agent, version="15.4", tps={1: [120]}, started_at="2026-11-02T10:00:00Z")
    upload(agent, version="16.0", tps={1: [5]}, scale=10, started_at="2026-11-05T10:00:00Z")

    comparison = compare(["15.4", "16.0"])

    assert [s.label for s in comparison.series] == ["15.4", "16.0"]
    assert len(comparison.mixed_keys) == 1
    body = anon_client.get(
        "/api/v1/compare/?workload=select-only&host=bench-01&versions=15.4,16.0"
    ).json()
    assert len(body["mixed_keys"]) == 1
    html = anon_client.get(
        "/compare/?workload=select-only&host=bench-01&versions=15.4,16.0"
    ).content.decode()
    assert "Not like with like" in html


def test_it_draws_one_key_per_history_line(agent, anon_client):
    upload(agent, version="13.3", tps={1: [100]}, started_at="2026-11-01T10:00:00Z")
    upload(agent, version="14.1", tps={1: [110]}, started_at="2026-11-02T10:00:00Z")
    upload(agent, version="15.4", tps={1: [7]}, scale=10, started_at="2026-11-03T10:00:00Z")
    upload(agent, version="15.4", tps={1: [9]}, duration_s=60.0, started_at="2026-11-04T10:00:00Z")

    newest = history_get(host="bench-01", workload="select-only", clients=1)

    assert [p.tps_median for p in newest.points] == pytest.approx([9])
    assert len(newest.keys) == 3 and newest.mixed == 0
    small_key = next(k for k, n in newest.keys if n == 2)
    small = history_get(host="bench-01", workload="select-only", clients=1, key=small_key[:10])
    assert [p.version for p in small.points] == ["13.3", "14.1"]
    # Asked by configuration, the line must mix the three keys, and the page says so.
    mixed = history_get(
        host="bench-01", workload="select-only", clients=1, config=newest.config_hash[:8]
    )
    assert len(mixed.points) == 4 and mixed.mixed == 3
    html = anon_client.get(
        f"/history/?host=bench-01&workload=select-only&clients=1&config={newest.config_hash[:8]}"
    ).content.decode()
    assert "This chart mixes runs of 3 comparability keys" in html
    page = anon_client.get("/history/?host=bench-01&workload=select-only&clients=1").content
    assert b"runs under 3 comparability keys" in page
