"""A series split where its runs stop being like with like: History marks the split and names
what changed, and detection never calls a change point across one. History and detection read
the series in one order, the runs' start times.

The runs are uploaded as an agent does; a step of 20% at the split would be detected were the
series one (test_detection.py has the same step found in a series that does not split)."""

import hashlib
import json
from typing import Any

import pytest

from benchhub.regressions.models import Regression
from benchhub.regressions.services import run_detect
from benchhub.regressions.tests.series import noisy
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import host_facts, result, run_payload

BEFORE = noisy(1000.0, 8, seed=1)
AFTER = noisy(800.0, 6, seed=2)
HISTORY = "/history/?host=bench-01&workload=select-only&clients=4"


def _upload(agent, *, version: str, tps: float, day: int, **change: Any) -> Run:
    """One run at 4 clients; `change` says what differs from the usual run: kernel, pgbench
    (the client's version), threads, warmup_s, tablespaces (their evidence, as uploaded)."""
    facts = host_facts(agent.host_name)
    if "kernel" in change:
        facts["facts"]["kernel"] = change["kernel"]
    payload = run_payload(
        version=version,
        host=agent.host_name,
        clients=(4,),
        repeats=1,
        started_at=f"2026-10-{day:02d}T10:00:00Z",
        pgbench_version=change.get("pgbench", "15.19"),
        warmup_s=change.get("warmup_s", 10.0),
        tablespaces=change.get("tablespaces", []),
    )
    payload["host"] = facts
    if "cflags" in change:
        payload["build"] = _source_build(version, cflags=change["cflags"])
    payload["results"] = [result(4, 1, tps, threads=change.get("threads", 4))]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.id)
    return run


def _source_build(version: str, *, cflags: str) -> dict[str, Any]:
    """A build of `version` from source, as the agent uploads its provenance."""
    provenance = {
        "name": version,
        "key": hashlib.sha256(f"{version} {cflags}".encode()).hexdigest()[:16],
        "version": version,
        "source": {"kind": "tarball", "url": f"https://ftp.postgresql.org/v{version}.tar.bz2"},
        "configure_flags": ["--enable-debug"],
        "cflags": cflags,
        "compiler": {"cc": "gcc", "version": "gcc (Debian 12.2.0-14) 12.2.0"},
    }
    return {"version": version, "origin": "source", "provenance": provenance}


def _series(agent, change: dict[str, Any]) -> list[Run]:
    """BEFORE as usual, then AFTER with `change`: versions 14.1, 14.2, ... a day apart (built
    from source with -O2 before the change when the change is the CFLAGS)."""
    runs = []
    usual = {"cflags": "-O2"} if "cflags" in change else {}
    for day, tps in enumerate(BEFORE + AFTER, start=1):
        after = day > len(BEFORE)
        runs.append(
            _upload(agent, version=f"14.{day}", tps=tps, day=day, **(change if after else usual))
        )
    return runs


def _tablespace(name: str, dev: str) -> dict[str, Any]:
    """A tablespace's evidence as the agent uploads it, on the device `dev` (major:minor)."""
    mount = f"/mnt/{name}"
    return {
        "name": name,
        "location": f"{mount}/benchhub-7-1-v0",
        "dev": dev,
        "mount_point": mount,
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

CHANGES = [
    ({"cflags": "-O0"}, "build CFLAGS -O0 (not -O2)"),
    ({"kernel": "6.8.0-40-generic"}, "kernel 6.8.0-40-generic (not 6.1.0-26-amd64)"),
    ({"pgbench": "16.4"}, "pgbench client 16 (not 15)"),
    ({"threads": 2}, "threads 2 at 4 clients (not 4)"),
    ({"warmup_s": 30.0}, "warm-up 30 s (not 10 s)"),
    ({"tablespaces": SEPARATE_DISKS}, "tablespaces tables, indexes on 2 devices (not none)"),
]


@pytest.mark.parametrize(("change", "reason"), CHANGES, ids=[c[1].split()[0] for c in CHANGES])
def test_it_splits_the_series_and_calls_no_change_across_the_split(agent, client, change, reason):
    runs = _series(agent, change)
    assert run_detect(run_id=runs[-1].pk) == 0
    assert not Regression.objects.exists()
    page = client.get(HISTORY).content.decode()
    splits = page[page.index('id="history-splits"') :]
    assert f"from 2026-10-09 10:00: {reason}" in splits[: splits.index("</div>")]
    figure = json.loads(page[page.index('id="history-figure"') :].split(">", 1)[1].split("<")[0])
    dotted = [s for s in figure["layout"]["shapes"] if s["line"]["dash"] == "dot"]
    assert [s["x0"][:10] for s in dotted] == ["2026-10-09"]
    line = figure["data"][0]
    assert line["y"][len(BEFORE)] is None and len(line["y"]) == len(runs) + 1


def test_tablespaces_on_one_device_are_not_tablespaces_on_two(agent, client):
    # The same names throughout, but the second batch has both on one disk.
    one_disk = [_tablespace("tables", "259:1"), _tablespace("indexes", "259:1")]
    for day, tps in enumerate(BEFORE + AFTER, start=1):
        spaces = one_disk if day > len(BEFORE) else SEPARATE_DISKS
        run = _upload(agent, version=f"14.{day}", tps=tps, day=day, tablespaces=spaces)
    assert run_detect(run_id=run.pk) == 0
    page = client.get(HISTORY).content.decode()
    splits = page[page.index('id="history-splits"') :]
    reason = "tablespaces tables, indexes on one device (not tables, indexes on 2 devices)"
    assert f"from 2026-10-09 10:00: {reason}" in splits[: splits.index("</div>")]


def test_history_carries_the_differences_banner_of_compare(agent, client):
    _series(agent, {"kernel": "6.8.0-40-generic"})
    page = client.get(HISTORY).content.decode()
    banner = page[page.index('id="differences"') :]
    banner = banner[: banner.index("</div>")]
    assert "These runs differ in more than the version" in banner
    assert (
        "<strong>kernel</strong>: from 2026-10-01 10:00 = <code>6.1.0-26-amd64</code>; "
        "from 2026-10-09 10:00 = <code>6.8.0-40-generic</code>"
    ) in " ".join(banner.split())


def test_a_series_without_a_split_has_no_banner_and_its_change_is_found(agent, client):
    runs = _series(agent, {})
    assert run_detect(run_id=runs[-1].pk) == 1
    page = client.get(HISTORY).content.decode()
    assert 'id="history-splits"' not in page and 'id="differences"' not in page


def test_a_change_on_one_side_of_a_split_is_still_found(agent):
    # Six runs on the old kernel, then the step inside the new kernel's segment.
    runs = [_upload(agent, version=f"14.{d}", tps=1000.0, day=d) for d in range(1, 7)]
    kernel = {"kernel": "6.8.0-40-generic"}
    for day, tps in enumerate(BEFORE + AFTER, start=7):
        runs.append(_upload(agent, version=f"14.{day}", tps=tps * 1.2, day=day, **kernel))
    assert run_detect(run_id=runs[-1].pk) == 1
    regression = Regression.objects.get()
    assert (regression.run_before, regression.run_after) == (runs[13], runs[14])
    assert regression.before_runs == len(BEFORE)


def test_detection_reads_the_series_in_time_order_as_history_plots_it(agent, client):
    # Versions that fall as time goes on (a back-branch measured after a newer one): in version
    # order the series would rise at the oldest run of the second batch; in time it falls there.
    runs = [
        _upload(agent, version=f"14.{30 - day}", tps=tps, day=day)
        for day, tps in enumerate(BEFORE + AFTER, start=1)
    ]
    assert run_detect(run_id=runs[-1].pk) == 1
    regression = Regression.objects.get()
    assert regression.kind == "regression"
    assert (regression.run_before, regression.run_after) == (runs[7], runs[8])
    page = client.get(HISTORY).content.decode()
    table = page[page.index('id="history-table"') :]
    shown = [table.index(str(run.uuid)[:8]) for run in runs]
    assert shown == sorted(shown)


def test_a_twin_host_is_another_series(agent, other_agent):
    # bench-01 and bench-02 report the same hardware, so their runs share the key; each host's
    # runs are flat, bench-02's lower: no change in either series, none between them.
    runs = [_upload(agent, version=f"14.{d}", tps=tps, day=d) for d, tps in enumerate(BEFORE, 1)]
    for day, tps in enumerate(AFTER, start=len(BEFORE) + 1):
        runs.append(_upload(other_agent, version=f"14.{day}", tps=tps, day=day))
    assert runs[0].comparability_key == runs[-1].comparability_key
    assert run_detect(run_id=runs[-1].pk) == 0
    assert run_detect(run_id=runs[0].pk) == 0
    assert not Regression.objects.exists()
