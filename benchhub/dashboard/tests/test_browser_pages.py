"""Every page, in Chromium at 1280x800: no script errors, nothing wider than the window, and no
headings, tables or navigation links drawn on top of one another."""

import json

import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.uploads import evidence_result, upload_results
from benchhub.jobs.models import Job
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.browser import screenshot, sign_in
from benchhub.testing.payloads import run_payload

FOLDED = "postgres;PostgresMain;exec_simple_query 80\npostgres;PostgresMain;LWLockAcquire 20\n"
WAITS = {"CPU": 0.6, "LWLock:ProcArray": 0.4}
# Pairs of boxes that overlap by more than a pixel where neither contains the other.
OVERLAPS = """() => {
  // Content of a closed <details> is not shown (Chromium keeps its layout boxes, though).
  const boxes = Array.from(document.querySelectorAll("main h1, main h2, table, nav a"))
    .filter(node => !node.closest("details:not([open])"))
    .map(node => [node, node.getBoundingClientRect()])
    .filter(([, box]) => box.width > 0 && box.height > 0);
  const name = node => node.tagName.toLowerCase() + ":" + node.textContent.trim().slice(0, 30);
  const found = [];
  boxes.forEach(([a, boxA], i) => boxes.slice(i + 1).forEach(([b, boxB]) => {
    if (a.contains(b) || b.contains(a)) return;
    const width = Math.min(boxA.right, boxB.right) - Math.max(boxA.left, boxB.left);
    const height = Math.min(boxA.bottom, boxB.bottom) - Math.max(boxA.top, boxB.top);
    if (width > 1 && height > 1) found.push(name(a) + " / " + name(b));
  }));
  return found;
}"""
OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def check_page(page, url: str, name: str) -> list[str]:
    """Visit `url`, save a screenshot, and say what is wrong with the page."""
    errors: list[str] = []

    def script_error(exc: Exception) -> None:
        errors.append(f"{name}: script error {exc}")

    page.on("pageerror", script_error)
    response = page.goto(url)
    page.wait_for_load_state("networkidle")
    if response.status != 200:
        errors.append(f"{name}: HTTP {response.status}")
    overflow = page.evaluate(OVERFLOW)
    if overflow > 0:
        errors.append(f"{name}: {overflow}px wider than the window")
    errors += [f"{name}: overlap {pair}" for pair in page.evaluate(OVERLAPS)]
    screenshot(page, f"page-{name}")
    page.remove_listener("pageerror", script_error)
    return errors


@pytest.mark.django_db(transaction=True)
def test_it_makes_every_page_readable_at_1280x800(live_server, page, agent, alice):
    runs = []
    for version in ("13.3", "14.0"):
        payload = run_payload(version=version, clients=(1, 2, 4, 8, 16, 32, 64))
        agent.client.post(
            "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
        )
        runs.append(payload["run_uuid"])
        run_aggregate(run_id=Run.objects.get(uuid=payload["run_uuid"]).pk)
    people = APIClient()
    people.force_login(alice)
    job = people.post(
        "/api/v1/jobs/",
        {
            "versions": ["13.3", "14.0"],
            "workload": {"name": "select-only", "builtin": "select-only"},
            "clients": [1, 2, 4, 8, 16, 32, 64],
            "duration_s": 60,
            "repeats": 3,
            "config_overrides": {"shared_buffers": "8GB", "max_wal_size": "16GB"},
        },
        format="json",
    ).json()
    agent.client.post("/api/v1/jobs/claim/")
    agent.client.post(
        f"/api/v1/jobs/{job['id']}/heartbeat/",
        {
            "progress": {
                "stage": "level c=8 repeat=2 version=14.0",
                "step": 9,
                "steps": 42,
                "line": "progress: 40.0 s, 51234.5 tps, lat 0.156 ms stddev 0.041",
            }
        },
        format="json",
    )
    url = live_server.url
    public = {
        "admin-login": "/admin/login/",
        "home": "/",
        "jobs": "/jobs/",
        "job": f"/jobs/{job['id']}/",
        "run": f"/runs/{runs[0]}/",
        "api-docs": "/api/docs/",
        "workloads": "/workloads/",
        "compare": "/compare/?workload=select-only&host=bench-01&versions=13.3,14.0",
        "host": "/hosts/bench-01/",
        "statistics": "/docs/statistics/",
        "regressions": "/regressions/",
        "alerts": "/regressions/groups/",
        "bisections": "/bisections/",
    }
    problems = []
    for name, path in public.items():
        problems += check_page(page, url + path, name)
    sign_in(page, url, "alice", "alice-pass-1")
    for name, path in {
        "job-form": "/jobs/new/",
        "import-outputs": "/import/",
        "import-summary": "/import/summary/",
        "home-signed-in": "/",
        "subscriptions": "/regressions/subscriptions/",
        "bisection-form": "/bisections/new/",
    }.items():
        problems += check_page(page, url + path, name)
    assert problems == []


@pytest.mark.django_db(transaction=True)
def test_it_shows_a_catalog_entrys_defaults_in_the_job_form_and_queues_it(live_server, page, alice):
    sign_in(page, live_server.url, "alice", "alice-pass-1")
    page.goto(live_server.url + "/jobs/new/")
    assert page.get_attribute("#id_clients", "placeholder") == ""
    page.select_option("#id_catalog", "e5-read-only")
    assert page.get_attribute("#id_clients", "placeholder") == "2 4 8 16"
    assert page.get_attribute("#id_params", "placeholder") == "scale = 10"
    assert page.is_disabled("#id_builtin")
    assert page.is_disabled("#id_script_0_body") and page.is_disabled("#id_setup")
    page.fill("#id_versions", "13 14")
    page.fill("#id_params", "scale = 2")
    page.click("form.job-form button[type=submit]")
    page.wait_for_url("**/jobs/*/")
    screenshot(page, "job-from-catalog")
    assert "e5-read-only" in page.content()


@pytest.mark.django_db(transaction=True)
def test_it_puts_the_answer_on_the_first_screen_at_1440x900(live_server, page, agent):
    """The compare page's verdict per level and the run page's tps per level are where a person
    looks first: every level's verdict on the first screen and the whole page, its sections
    closed, within 3,000 px; the run's levels within 1,200 px, its host and settings folded."""
    runs = []
    for version, factor in (("13.3", 1.0), ("14.0", 1.2)):
        results = [
            evidence_result(c, r, 100.0 * c * factor + r, waits=WAITS, folded=FOLDED, p99=2.0)
            for c in (1, 2, 4, 8, 16, 32)
            for r in (1, 2, 3)
        ]
        runs.append(upload_results(agent, version=version, results=results).uuid)
    page.set_viewport_size({"width": 1440, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,14.0")
    page.wait_for_selector("#latency-chart .main-svg")
    table = page.locator("#verdict-table").bounding_box()
    last_level = page.locator("#verdict-table tr[data-clients='32']").bounding_box()
    height = page.evaluate("document.documentElement.scrollHeight")
    closed = page.evaluate("Array.from(document.querySelectorAll('details.lazy'), d => d.open)")
    assert "None" not in page.inner_text("main")
    screenshot(page, "compare-1440-closed")
    # opening a section fetches it: its content (and figures) arrive in the page
    assert page.locator("#why-table").count() == 0
    page.click("#why summary")
    page.wait_for_selector("#why-table")
    page.wait_for_selector("#why-waits .main-svg")
    page.click("#flames summary")
    page.wait_for_selector("#why-flame-0 .main-svg")
    assert "None" not in page.inner_text("main")
    page.goto(f"{live_server.url}/runs/{runs[0]}/")
    levels = page.locator("#per-level").bounding_box()
    last_run_level = page.locator("#per-level + table tbody tr:last-child").bounding_box()
    folded = page.evaluate(
        "['measured-on', 'settings'].map(id => document.getElementById(id).open)"
    )
    assert "None" not in page.inner_text("main")
    screenshot(page, "run-1440")

    assert table is not None and last_level is not None and levels is not None
    assert table["y"] < 900, f"the verdict table starts at {table['y']:.0f} px"
    assert last_level["y"] + last_level["height"] < 900, "every level on the first screen"
    assert closed == [False] * 5
    assert height <= 3000, f"the compare page is {height} px tall with its sections closed"
    assert last_run_level is not None
    assert last_run_level["y"] + last_run_level["height"] < 1200, "the run's levels by 1,200 px"
    assert folded == [False, False]
    assert errors == []


def test_it_queues_custom_scripts_from_the_job_form_after_showing_a_refusal(
    live_server, page, alice
):
    sign_in(page, live_server.url, "alice", "alice-pass-1")
    page.goto(live_server.url + "/jobs/new/")
    page.fill("#id_versions", "13 14")
    page.fill("#id_workload_name", "mixed")
    page.fill("#id_script_0_name", "read.sql")
    page.fill("#id_script_0_weight", "9")
    page.fill("#id_script_0_body", "\\set id random(1, 1000)\nSELECT :id;")
    page.fill("#id_script_1_name", "write.sql")
    page.fill("#id_script_1_body", "SELECT 1;\n\\shell id")
    page.click("form.job-form button[type=submit]")
    # refused, next to its row, with what was typed kept
    row = page.locator("fieldset.job-scripts tr", has_text="scripts[1]")
    assert "scripts[1].body: line 2: pgbench \\shell" in row.inner_text()
    screenshot(page, "job-form-custom-scripts-refused")
    assert page.input_value("#id_script_0_weight") == "9"
    page.fill("#id_script_1_body", "SELECT 2;")
    page.click("form.job-form button[type=submit]")
    page.wait_for_url("**/jobs/*/")
    job = Job.objects.get()
    assert [(s["name"], s["weight"]) for s in job.workload["scripts"]] == [
        ("read.sql", 9),
        ("write.sql", 1),
    ]
    assert job.workload["scripts"][0]["body"] == "\\set id random(1, 1000)\nSELECT :id;"
