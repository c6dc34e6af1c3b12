"""One set of runs per comparison: the per-level numbers, change % and verdicts of a version all
come from the runs the API lists for it; by default those are the compared host's own, and runs
of another host with the same hardware join only when asked (`same_hardware`), named.

The twin hosts: bench-01 and bench-02 report the same hardware facts, so their runs share the
comparability key. On bench-01, 14.0 is 10% faster than 13.3; on bench-02 the two versions were
measured with the same repeats in another order."""

import pytest

from benchhub.compare.tests.uploads import upload
from benchhub.dashboard.tests.sections import section_html
from benchhub.testing.payloads import host_facts, result, run_payload, telemetry

SPREAD = (1.00, 1.01, 0.99)
LEVELS = (1, 4)


def _runs(agent, version: str, factors: tuple[float, ...], day: int) -> None:
    """One run per factor, each one repeat a level at 1000 tps a client times the factor."""
    for n, factor in enumerate(factors):
        upload(
            agent,
            version=version,
            tps={c: [1000.0 * c * factor] for c in LEVELS},
            started_at=f"2026-11-{day:02d}T1{n}:00:00Z",
        )


@pytest.fixture
def twins(agent, other_agent):
    _runs(agent, "13.3", SPREAD, 10)
    _runs(agent, "14.0", tuple(1.1 * f for f in SPREAD), 11)
    _runs(other_agent, "13.3", SPREAD, 12)
    _runs(other_agent, "14.0", (0.99, 1.00, 1.01), 13)


def _compare(client, host: str, *extra: str) -> dict:
    url = f"/api/v1/compare/?workload=select-only&host={host}&versions=13.3,14.0"
    response = client.get("&".join((url, *extra)))
    assert response.status_code == 200, response.content
    return response.json()


def _verdicts(body: dict) -> dict[int, str]:
    return {row["clients"]: row["versions"][1]["verdict"] for row in body["rows"]}


def test_the_twin_host_compares_its_own_runs_only(anon_client, twins):
    body = _compare(anon_client, "bench-02")
    assert body["missing"] == []
    for series in body["series"]:
        assert {run["host"] for run in series["runs"]} == {"bench-02"}
        assert len(series["runs"]) == len(series["pooled_runs"]) == 3
    assert body["pooled_hosts"] == ["bench-02"]
    assert not {"faster", "slower"} & set(_verdicts(body).values())
    changes = [row["versions"][1]["change_pct"] for row in body["rows"]]
    assert changes == pytest.approx([0.0, 0.0], abs=1e-9)
    levels = body["verdicts"][0]["levels"]
    assert [level["repeats"] for level in levels] == [[3, 3], [3, 3]]


def test_the_faster_host_is_faster_at_every_level(anon_client, twins):
    body = _compare(anon_client, "bench-01")
    assert _verdicts(body) == {1: "faster", 4: "faster"}
    assert [row["versions"][1]["change_pct"] for row in body["rows"]] == pytest.approx([10, 10])
    assert body["pooled_hosts"] == ["bench-01"]


def test_same_hardware_pools_both_hosts_and_names_them(anon_client, twins):
    body = _compare(anon_client, "bench-02", "same_hardware=1")
    assert body["pooled_hosts"] == ["bench-01", "bench-02"]
    for series in body["series"]:
        assert len(series["runs"]) == 6
    # The table reads the same six runs a side as the verdict: the median of 14.0's six
    # repeats (0.99, 1.00, 1.01 and 1.089, 1.1, 1.111 x) against 13.3's (1.00 x).
    levels = body["verdicts"][0]["levels"]
    assert [level["repeats"] for level in levels] == [[6, 6], [6, 6]]
    row = body["rows"][0]["versions"]
    assert row[0]["tps"] == pytest.approx(1000.0)
    assert row[1]["tps"] == pytest.approx(1000.0 * (1.01 + 1.1 * 0.99) / 2)


def test_the_page_lists_each_set_and_names_the_hosts_pooled(client, twins):
    url = "/compare/?workload=select-only&host=bench-02&versions=13.3,14.0"
    own = section_html(client, url, "evidence")
    assert "13.3: 3 runs on bench-02, 2026-11-12" in own
    assert "14.0: 3 runs on bench-02, 2026-11-13" in own
    sets = own[own.index('id="run-sets"') : own.index("</ul>", own.index('id="run-sets"'))]
    assert "on bench-02 only" in sets and "bench-01" not in sets
    pooled = section_html(client, url + "&same_hardware=1", "evidence")
    assert '<strong id="pooled-hosts">bench-01, bench-02</strong>' in pooled
    assert "14.0: 6 runs on bench-01, bench-02, 2026-11-11 to 2026-11-13" in pooled


def test_a_run_that_differs_in_what_moves_tps_is_left_out_and_said_why(
    anon_client, client, other_agent, twins
):
    facts = host_facts(other_agent.host_name)
    facts["facts"]["kernel"] = "6.8.0-40-generic"
    payload = run_payload(
        version="14.0",
        host=other_agent.host_name,
        clients=LEVELS,
        repeats=1,
        started_at="2026-11-14T10:00:00Z",
        pgbench_version="16.4",
    )
    payload.update(host=facts, results=[result(c, 1, 2000.0 * c) for c in LEVELS])
    response = other_agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 201, response.content
    body = _compare(anon_client, "bench-02")
    # The newest run stands for 14.0; the three before it ran on another kernel and client.
    assert len(body["series"][1]["runs"]) == 1
    assert body["left_out"] == [
        {
            "label": "14.0",
            "runs": 3,
            "reasons": [
                "pgbench client 15 (not 16): 3 runs",
                "kernel 6.1.0-26-amd64 (not 6.8.0-40-generic): 3 runs",
            ],
        }
    ]
    html = section_html(
        client, "/compare/?workload=select-only&host=bench-02&versions=13.3,14.0", "evidence"
    )
    assert "3 runs of 14.0 left out, not like with like: pgbench client 15" in html


def test_a_run_of_other_pgbench_threads_is_left_out(anon_client, other_agent, twins):
    payload = run_payload(
        version="14.0",
        host=other_agent.host_name,
        clients=LEVELS,
        repeats=1,
        started_at="2026-11-01T10:00:00Z",
    )
    payload["results"] = [result(c, 1, 5000.0 * c, threads=1) for c in LEVELS]
    assert other_agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    body = _compare(anon_client, "bench-02")
    assert len(body["series"][1]["runs"]) == 3
    assert body["left_out"] == [
        {"label": "14.0", "runs": 1, "reasons": ["threads 1 at 4 clients (not 4): 1 run"]}
    ]
    assert [level["repeats"] for level in body["verdicts"][0]["levels"]] == [[3, 3], [3, 3]]


def test_a_client_bound_level_says_it_measures_the_client(anon_client, client, agent):
    for version, tps in (("13.3", 1000.0), ("14.0", 1100.0)):
        payload = run_payload(version=version, host=agent.host_name, clients=LEVELS, repeats=1)
        payload["results"] = [
            result(c, 1, tps * c, client_bound=(c == 4 and version == "14.0")) for c in LEVELS
        ]
        assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    body = _compare(anon_client, "bench-01")
    assert [row["versions"][1]["client_bound"] for row in body["rows"]] == [False, True]
    html = section_html(
        client, "/compare/?workload=select-only&host=bench-01&versions=13.3,14.0", "evidence"
    )
    assert html.count("client-bound: measures the client, not the server") == 1


def _unlike_run(other_agent) -> None:
    """bench-02's newest run of 14.0, on another kernel and pgbench client than its others."""
    facts = host_facts(other_agent.host_name)
    facts["facts"]["kernel"] = "6.8.0-40-generic"
    payload = run_payload(
        version="14.0",
        host=other_agent.host_name,
        clients=LEVELS,
        repeats=1,
        started_at="2026-11-14T10:00:00Z",
        pgbench_version="16.4",
    )
    payload.update(host=facts, results=[result(c, 1, 1000.0 * c) for c in LEVELS])
    assert other_agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201


def test_unlike_runs_included_on_purpose_mark_the_verdict_not_like_with_like(
    anon_client, client, other_agent, twins
):
    _unlike_run(other_agent)
    alike = _compare(anon_client, "bench-02")
    assert alike["like_with_like"] is True and alike["unlike"] == []
    assert alike["verdicts"][0]["not_like_with_like"] == []
    body = _compare(anon_client, "bench-02", "unlike=1")
    assert body["left_out"] == []
    assert len(body["series"][1]["runs"]) == 4
    assert [level["repeats"] for level in body["verdicts"][0]["levels"]] == [[3, 4], [3, 4]]
    assert body["like_with_like"] is False
    reasons = [
        "pgbench client 15 (not 16): 3 runs",
        "kernel 6.1.0-26-amd64 (not 6.8.0-40-generic): 3 runs",
    ]
    assert body["unlike"] == [{"label": "14.0", "runs": 3, "reasons": reasons}]
    assert body["verdicts"][0]["like_with_like"] is False
    assert body["verdicts"][0]["not_like_with_like"] == [
        f"14.0's set includes 3 runs that differ: {'; '.join(reasons)}"
    ]
    url = "/compare/?workload=select-only&host=bench-02&versions=13.3,14.0"
    page = client.get(url + "&unlike=1").content.decode()
    banner = page[page.index('id="not-like-with-like"') :]
    assert "pgbench client 15 (not 16): 3 runs" in banner[: banner.index("</div>")]
    assert page.count('<span class="badge warn">not like with like</span>') == 1
    assert 'id="id_unlike" checked' in page
    assert 'id="not-like-with-like"' not in client.get(url).content.decode()


def _bound_run(agent, version: str, tps: float, *, cpu: float, idle: float, threads: int):
    """A run whose repeats at 4 clients carry the agent's telemetry: pgbench's CPU (percent of
    one core, all its threads) and the host's idle CPU, with the agent's flag left false."""
    payload = run_payload(version=version, host=agent.host_name, clients=LEVELS, repeats=1)
    samples = telemetry(iowait_pct=[0.0, 0.0])
    for sample in samples:
        sample.update(client_cpu_pct=cpu, cpu_idle_pct=idle)
    payload["results"] = [
        result(c, 1, tps * c, threads=threads, telemetry=samples, client_bound=False)
        if c == 4
        else result(c, 1, tps * c, threads=threads)
        for c in LEVELS
    ]
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201


@pytest.mark.parametrize(
    ("cpu", "idle", "threads", "bound"),
    [
        (190.0, 60.0, 2, True),  # two threads at 95% of a core each, the host 60% idle
        (170.0, 60.0, 2, False),  # 85% of a core each
        (240.0, 5.0, 4, True),  # four threads at 60% of a core, no idle CPU left to them
        (240.0, 40.0, 4, False),  # the same threads on a host with CPU to spare
    ],
)
def test_client_bound_is_judged_from_pgbench_threads_and_the_idle_cpu(
    anon_client, client, agent, cpu, idle, threads, bound
):
    _bound_run(agent, "13.3", 1000.0, cpu=30.0, idle=60.0, threads=threads)
    _bound_run(agent, "14.0", 1100.0, cpu=cpu, idle=idle, threads=threads)
    body = _compare(anon_client, "bench-01")
    assert [row["versions"][1]["client_bound"] for row in body["rows"]] == [False, bound]
    levels = body["verdicts"][0]["levels"]
    assert [level["client_bound"] for level in levels] == [False, bound]
    assert body["verdicts"][0]["client_bound_clients"] == ([4] if bound else [])
    measures = "the client, not the server" if bound else "the server"
    assert levels[1]["measures"] == measures
    assert levels[1]["description"].endswith("measures the client, not the server.") is bound
    page = client.get("/compare/?workload=select-only&host=bench-01&versions=13.3,14.0")
    note = "At 4 clients pgbench itself was the bottleneck: there the verdict measures the client"
    assert (note in page.content.decode()) is bound


def _tablespace(name: str, dev: str) -> dict:
    """A tablespace's evidence as the agent uploads it, on the device `dev` (major:minor)."""
    return {
        "name": name,
        "location": f"/mnt/{name}/benchhub-7-1-v0",
        "dev": dev,
        "mount_point": f"/mnt/{name}",
        "fstype": "xfs",
        "source": f"/dev/{name}",
        "device": name,
        "measured_s": 60.0,
        "read_bytes_per_s": 0.0,
        "write_bytes_per_s": 1048576.0,
        "read_iops": 0.0,
        "write_iops": 50.0,
        "util_pct": 20.0,
    }


SEPARATE_DISKS = [_tablespace("tables", "259:1"), _tablespace("indexes", "259:2")]


def test_a_run_on_separate_tablespaces_is_left_out_of_runs_on_the_default(
    anon_client, other_agent, twins
):
    # bench-02's newest 14.0 put tables and indexes on two disks; its others used none.
    upload(
        other_agent,
        version="14.0",
        tps={c: [2000.0 * c] for c in LEVELS},
        started_at="2026-11-14T10:00:00Z",
        tablespaces=SEPARATE_DISKS,
    )
    body = _compare(anon_client, "bench-02")
    assert len(body["series"][1]["runs"]) == 1
    assert body["left_out"] == [
        {
            "label": "14.0",
            "runs": 3,
            "reasons": ["tablespaces none (not tables, indexes on 2 devices): 3 runs"],
        }
    ]


def test_the_same_tablespaces_on_one_device_are_left_out_too(anon_client, agent):
    one_disk = [_tablespace("tables", "259:1"), _tablespace("indexes", "259:1")]
    for n, spaces in enumerate((one_disk, SEPARATE_DISKS, SEPARATE_DISKS)):
        upload(
            agent,
            version="13.3",
            tps={c: [1000.0 * c] for c in LEVELS},
            started_at=f"2026-11-1{n}T10:00:00Z",
            tablespaces=spaces,
        )
    upload(agent, version="14.0", tps={c: [1000.0 * c] for c in LEVELS}, tablespaces=one_disk)
    body = _compare(anon_client, "bench-01")
    assert [len(series["runs"]) for series in body["series"]] == [2, 1]
    assert body["left_out"] == [
        {
            "label": "13.3",
            "runs": 1,
            "reasons": [
                "tablespaces tables, indexes on one device "
                "(not tables, indexes on 2 devices): 1 run"
            ],
        }
    ]
    # The versions themselves differ in it: the differences banner names it.
    named = {d["name"]: d["values"] for d in body["differences"]}
    assert named["tablespaces"] == [
        ["13.3", "tables, indexes on 2 devices"],
        ["14.0", "tables, indexes on one device"],
    ]


def test_the_compare_page_names_a_tablespace_layout_that_differs(client, agent):
    upload(agent, version="13.3", tps={c: [1000.0 * c] for c in LEVELS})
    upload(agent, version="14.0", tps={c: [1000.0 * c] for c in LEVELS}, tablespaces=SEPARATE_DISKS)
    page = client.get("/compare/?workload=select-only&host=bench-01&versions=13.3,14.0")
    banner = page.content.decode()
    banner = banner[banner.index('id="differences"') :]
    banner = " ".join(banner[: banner.index("</div>")].split())
    assert "<strong>tablespaces</strong>" in banner
    assert "tables, indexes on 2 devices" in banner and "none" in banner
