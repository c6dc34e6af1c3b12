"""Everything people and agents send is shown as text: an XSS payload stored in every field a page
shows runs nowhere, in Chromium, on every page that shows it."""

from urllib.parse import quote

import pytest
from playwright.sync_api import Dialog
from rest_framework.test import APIClient

from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.browser import screenshot
from benchhub.testing.payloads import result, run_payload

# An attribute handler, a script that tries to end the json_script block it lands in, and markup.
IMG = '<img src=x onerror="window.__xss=1">'
SCRIPT = "</script><script>window.__xss=2</script>"
X = f"{IMG}{SCRIPT}<b>bold</b>"
# A script element the page would run (not a json_script data block) that carries the payload.
RUNNABLE_PAYLOAD = """Array.from(document.scripts).some(
    s => s.type !== "application/json" && s.text.includes("__xss"))"""
CLIENTS = {1: [1000.0, 1040.0], 2: [1900.0, 1980.0], 4: [3600.0, 3700.0]}


def _dirty(payload: dict) -> dict:
    """The payload in every free-text field an agent sends."""
    payload.update(notes=X, server_version=f"PostgreSQL {X}", pgbench_version=X, init={"output": X})
    payload["host"]["facts"].update(cpu_model=X, os=X, kernel=X, storage=X, virtualization="kvm")
    payload["host"]["lscpu"] = f"Model name: {X}\n"
    payload["host"]["sysctl"] = {"vm.swappiness": X}
    payload["build"]["configure_flags"] = X
    payload["configuration"]["settings"]["work_mem"] = X
    payload["configuration"]["sources"]["work_mem"] = X
    payload["workload"] = {
        "name": "xss-probe",
        "scripts": [{"name": X, "body": f"SELECT 1; -- {X}", "weight": 1}],
        "setup": [f"CREATE TABLE t (x text); -- {X}"],
        "options": [f"--define=x={X}"],
    }
    for item in payload["results"]:
        _dirty_result(item)
    return payload


def _upload(agent, version: str, factor: float) -> Run:
    payload = _dirty(run_payload(version=version, clients=tuple(CLIENTS)))
    payload["results"] = [
        _dirty_result(result(c, r, v * factor)) for c, vs in CLIENTS.items()
        for r, v in enumerate(vs, 1)
    ]  # fmt: skip
    response = agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.id)
    return run


def _dirty_result(item: dict) -> dict:
    item.update(raw_output=f"pgbench output {X}", errors=[X])
    item["statements"] = [{"latency_ms": 0.1, "failures": 0, "command": X}]
    return item


@pytest.fixture
def dirty(agent, bob, db):
    runs = [_upload(agent, "13.3", 1.0), _upload(agent, "15.4", 1.1)]
    people = APIClient()
    people.force_login(bob)
    base = f"/api/v1/runs/{runs[0].uuid}"
    assert (
        people.post(f"{base}/comments/", {"body": f"**note** {X}"}, format="json").status_code
        == 201
    )
    # Tags are validated names: the payload cannot be one.
    assert people.post(f"{base}/tags/", {"name": X}, format="json").status_code == 400
    assert people.post(f"{base}/tags/", {"name": "checked"}, format="json").status_code == 201
    assert (
        people.post(f"{base}/marks/", {"invalid": True, "reason": X}, format="json").status_code
        == 200
    )
    compare = "workload=xss-probe&host=bench-01&versions=13.3,15.4"
    thread = {"key": compare, "body": X}
    assert people.post("/api/v1/comparisons/comments/", thread, format="json").status_code == 201
    job = {
        "versions": ["13"],
        "host": "bench-01",
        "workload": {
            "name": "xss-probe",
            "scripts": [{"name": X, "body": f"SELECT 1; -- {X}"}],
            "setup": [f"SELECT 1; -- {X}"],
        },
        "clients": [1],
        "duration_s": 2,
    }
    failed = people.post("/api/v1/jobs/", job, format="json").json()
    assert agent.client.post("/api/v1/jobs/claim/").json()["id"] == failed["id"]
    finish = {"outcome": "failed", "stage": "provision", "message": X}
    finished = agent.client.post(f"/api/v1/jobs/{failed['id']}/finish/", finish, format="json")
    assert finished.status_code == 200
    running = people.post("/api/v1/jobs/", job, format="json").json()
    agent.client.post("/api/v1/jobs/claim/")
    # The stage is bounded by its column (50): the attribute handler alone fits.
    progress = {"version": X, "clients": 1, "repeat": 1, "line": X, "stage": IMG}
    beat = agent.client.post(
        f"/api/v1/jobs/{running['id']}/heartbeat/", {"progress": progress}, format="json"
    )
    assert beat.status_code == 200
    # People import under a host name of their own, never an agent's.
    imported = _dirty(run_payload(version="14.2", host="lab-box", source="import"))
    assert people.post("/api/v1/runs/", imported, format="json").status_code == 201
    return {
        "imported": imported["run_uuid"],
        "runs": runs,
        "compare": compare,
        "failed": failed["id"],
        "running": running["id"],
    }


@pytest.mark.django_db(transaction=True)
def test_it_runs_no_stored_payload_on_any_page(live_server, page, dirty, bob):
    executed: list[str] = []

    def dialog(d: Dialog) -> None:
        executed.append(d.message)
        d.dismiss()

    page.add_init_script("window.__xss = undefined;")
    page.on("dialog", dialog)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "bob-pass-1")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Sign out")
    a, b = dirty["runs"]
    pages = {
        "/": True,
        f"/runs/{a.uuid}/": True,
        f"/runs/{dirty['imported']}/": True,  # import notes
        f"/compare/?{dirty['compare']}": False,
        "/history/?host=bench-01&workload=xss-probe&clients=4": False,
        f"/diff/?a={a.uuid}&b={b.uuid}": False,  # the same payload in both: folded as identical
        "/runs/": True,  # the CPU model and pgbench version
        "/hosts/": False,
        "/jobs/": False,
        f"/jobs/{dirty['failed']}/": True,
        f"/jobs/{dirty['running']}/": True,
        "/experiments/": False,
        "/workloads/": False,
        "/review/": True,
        # and what a link can carry back into a page
        f"/diff/?a={quote(X)}&b={quote(X)}": False,
        f"/compare/?workload={quote(X)}&host={quote(X)}&versions=13.3": False,
        f"/history/?host={quote(X)}&workload=xss-probe&clients=4": False,
        f"/experiments/e2/?host={quote(X)}": False,
        f"/runs/?host={quote(X)}&version={quote(X)}&status={quote(X)}": False,
    }
    for path, shows_payload in pages.items():
        response = page.goto(live_server.url + path)
        assert response.status in (200, 400), path
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__xss") is None, path
        assert page.locator("[onerror]").count() == 0, path
        assert page.evaluate(RUNNABLE_PAYLOAD) is False, path
        if shows_payload:
            assert IMG in page.inner_text("body"), path
        screenshot(page, "xss" + path.replace("/", "_").split("?")[0])
    assert executed == []
