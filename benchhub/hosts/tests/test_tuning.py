"""Host tuning (THP, huge pages, CPU governor, sysctl) on the run and host pages, and named by a
comparison of runs whose hosts were tuned differently."""

import json
from types import SimpleNamespace

from benchhub.compare.selectors import comparison_get
from benchhub.hosts.tuning import NOT_RECORDED, host_tuning, tuning_differences
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import result, run_payload

EXTRA = {
    "transparent_hugepage": "always",
    "transparent_hugepage_defrag": "madvise",
    "hugepages_total": 0,
    "hugepagesize_kb": 2048,
    "cpu_governor": "performance",
}


def _upload(agent, *, version, extra=None, sysctl=None, started_at="2026-11-20T10:00:00Z"):
    payload = run_payload(version=version, host=agent.host_name, clients=(1,), repeats=1,
                          started_at=started_at)  # fmt: skip
    payload["results"] = [result(1, 1, 100.0)]
    if extra is not None:
        payload["host"]["extra"] = extra
    if sysctl is not None:
        payload["host"]["sysctl"] = sysctl
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.id)
    return run


def test_it_reads_the_tuning_in_a_fixed_order_and_says_what_was_not_recorded():
    facts = SimpleNamespace(
        extra={"transparent_hugepage": "never", "hugepagesize_kb": 2048, "hugepages_total": 9000},
        sysctl={"vm.swappiness": "0", "kernel.numa_balancing": "1"},
    )
    tuning = host_tuning(facts)
    assert list(tuning)[:5] == [
        "transparent huge pages", "THP defrag", "huge pages reserved", "huge page size",
        "CPU governor",
    ]  # fmt: skip
    assert tuning["transparent huge pages"] == "never"
    assert tuning["huge pages reserved"] == "9000 (vm.nr_hugepages; 17.6 GiB)"
    assert tuning["huge page size"] == "2048 kB"
    assert tuning["CPU governor"] == NOT_RECORDED
    assert list(tuning)[5:] == ["kernel.numa_balancing", "vm.swappiness"]
    assert host_tuning(None) == {}


def test_it_names_each_item_that_differs_from_the_baseline():
    base = {"transparent huge pages": "always", "vm.swappiness": "0"}
    other = {"transparent huge pages": "never", "vm.swappiness": "0", "vm.dirty_ratio": "5"}
    assert tuning_differences([("13", base), ("14", other)]) == [
        "14: transparent huge pages = never (baseline 13: always)",
        f"14: vm.dirty_ratio = 5 (baseline 13: {NOT_RECORDED})",
    ]
    assert tuning_differences([("13", base), ("14", dict(base))]) == []


def test_it_says_a_comparison_mixes_host_tuning(agent):
    _upload(agent, version="13.3", extra=EXTRA, sysctl={"vm.swappiness": "0"})
    _upload(
        agent,
        version="14.0",
        extra={**EXTRA, "transparent_hugepage": "never", "cpu_governor": "powersave"},
        sysctl={"vm.swappiness": "60"},
    )
    comparison = comparison_get(workload="select-only", host="bench-01", versions=["13.3", "14.0"])
    by_name = {d.name: d for d in comparison.differences}
    # The same machine (no hardware difference), tuned differently.
    assert "hardware" not in by_name
    assert by_name["host tuning"].details == [
        "14.0: transparent huge pages = never (baseline 13.3: always)",
        "14.0: CPU governor = powersave (baseline 13.3: performance)",
        "14.0: vm.swappiness = 60 (baseline 13.3: 0)",
    ]


def test_it_lists_no_tuning_difference_for_like_hosts(agent):
    _upload(agent, version="13.3", extra=EXTRA)
    _upload(agent, version="14.0", extra=dict(EXTRA))
    comparison = comparison_get(workload="select-only", host="bench-01", versions=["13.3", "14.0"])
    assert "host tuning" not in {d.name for d in comparison.differences}


def test_it_shows_the_tuning_and_lscpu_on_the_run_and_host_pages(agent, client):
    run = _upload(agent, version="14.0", extra=EXTRA, sysctl={"vm.swappiness": "<b>0</b>"})
    for url in (f"/runs/{run.uuid}/", "/hosts/bench-01/"):
        page = client.get(url).content.decode()
        assert "transparent huge pages = always" in page, url
        assert "CPU governor = performance" in page, url
        assert "huge pages reserved = 0 (vm.nr_hugepages; 0.0 GiB)" in page, url
        assert "vm.swappiness = &lt;b&gt;0&lt;/b&gt;" in page, url  # escaped
        assert 'id="lscpu"' in page and "Socket(s): 2" in page, url
