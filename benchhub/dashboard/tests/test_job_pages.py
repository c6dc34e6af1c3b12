"""Queueing a job from the web form, and following it on its page."""

import pytest
from rest_framework.test import APIClient

from benchhub.hosts.models import Host
from benchhub.jobs.models import Job

FORM = {
    "versions": "13 14",
    "builtin": "select-only",
    "query_mode": "prepared",
    "scale": "1",
    "clients": "1 2 4",
    "duration_s": "5",
    "repeats": "3",
    "order": "interleaved",
    "host": "",
    "settings": "shared_buffers = '256MB'\n# a comment\n",
    "priority": "0",
}


def test_it_queues_a_job_from_the_form(client, bob):
    client.force_login(bob)
    response = client.post("/jobs/new/", FORM)
    job = Job.objects.get()
    assert response.status_code == 302 and response.url == f"/jobs/{job.pk}/"
    assert (job.versions, job.clients, job.repeats) == (["13", "14"], [1, 2, 4], 3)
    assert job.config_overrides == {"shared_buffers": "256MB"}
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "13 vs 14" in page and "queued" in page and "shared_buffers = 256MB" in page


def test_it_queues_a_warm_up_and_a_shuffled_order_from_the_form(client, bob):
    client.force_login(bob)
    client.post("/jobs/new/", {**FORM, "warmup_s": "4", "level_order": "shuffled"})
    job = Job.objects.get()
    assert (job.warmup_s, job.level_order) == (4.0, "shuffled")
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "4 s warm-up before each measurement" in page
    assert f"shuffled per repeat (seed {job.shuffle_seed})" in page


def test_it_queues_the_profiled_level_from_the_form(client, bob):
    client.force_login(bob)
    refused = client.post("/jobs/new/", {**FORM, "profile_clients": "16"})
    assert refused.status_code == 200 and Job.objects.count() == 0
    assert "The profiled level is one of the job&#x27;s clients." in refused.content.decode()
    client.post("/jobs/new/", {**FORM, "profile_clients": "4"})
    job = Job.objects.get()
    assert job.profile_clients == 4
    assert "CPU profile (where the host allows perf) at 4 clients" in (
        client.get(f"/jobs/{job.pk}/").content.decode()
    )


def test_it_queues_an_a_a_job_from_the_form(client, bob):
    client.force_login(bob)
    refused = client.post("/jobs/new/", {**FORM, "aa": "on"})  # two versions
    assert refused.status_code == 200 and Job.objects.count() == 0
    assert "An A/A job names exactly one version." in refused.content.decode()
    response = client.post("/jobs/new/", {**FORM, "versions": "14", "aa": "on"})
    job = Job.objects.get()
    assert response.status_code == 302 and (job.aa, job.versions) == (True, ["14", "14"])
    assert "A/A, 14 against itself" in client.get(f"/jobs/{job.pk}/").content.decode()


def test_it_shows_the_api_rules_per_field_in_the_form(client, bob):
    client.force_login(bob)
    page = client.post("/jobs/new/", {**FORM, "versions": "13 fourteen"})
    assert page.status_code == 200 and Job.objects.count() == 0
    assert "is not a PostgreSQL version" in page.content.decode()
    page = client.post("/jobs/new/", {**FORM, "host": "nowhere"})
    assert page.status_code == 200 and Job.objects.count() == 0
    assert "nowhere is not one of the available choices" in page.content.decode()


def test_it_offers_the_known_hosts_and_pgbench_names_in_the_form(client, bob):
    Host.objects.create(name="bench-01")
    client.force_login(bob)
    html = client.get("/jobs/new/").content.decode()
    assert '<option value="bench-01">bench-01</option>' in html
    assert '<option value="" selected>any host</option>' in html
    assert '<option value="select-only" selected>select-only</option>' in html


def test_it_needs_sign_in_to_queue(client, db):
    assert client.get("/jobs/new/").status_code == 302
    assert client.post("/jobs/new/", FORM).status_code == 302
    assert Job.objects.count() == 0


def test_it_lists_jobs_in_the_queue_and_cancels_one(client, bob):
    Host.objects.create(name="bench-01")
    client.force_login(bob)
    client.post("/jobs/new/", {**FORM, "host": "bench-01"})
    job = Job.objects.get()
    assert "bench-01" in client.get("/jobs/").content.decode()
    client.post(f"/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.state == "cancelled"
    assert "cancelled" in client.get(f"/jobs/{job.pk}/").content.decode()


def test_it_shows_a_person_without_rights_which_host_refused_them_on_the_form(client, mallory):
    Host.objects.create(name="bench-01")
    client.force_login(mallory)
    page = client.post("/jobs/new/", {**FORM, "host": "bench-01"})
    assert page.status_code == 200 and Job.objects.count() == 0
    assert "You may not run jobs on host &#x27;bench-01&#x27;" in page.content.decode()


def test_it_queues_tablespaces_from_the_form_under_the_api_rules(client, bob, agent):
    # bench-01's agent offered two tablespaces when it last claimed work.
    agent.client.post("/api/v1/jobs/claim/", {"tablespaces": ["fast", "slow"]}, format="json")
    client.force_login(bob)
    page = client.get("/jobs/new/").content.decode()
    assert 'name="tablespaces"' in page and "Offered: bench-01: fast, slow" in page
    refused = client.post("/jobs/new/", {**FORM, "host": "bench-01", "tablespaces": "fast spare"})
    assert refused.status_code == 200 and Job.objects.count() == 0
    assert "Host bench-01 does not offer spare" in refused.content.decode()
    misspelt = client.post("/jobs/new/", {**FORM, "tablespaces": "Fast"})
    assert misspelt.status_code == 200 and Job.objects.count() == 0
    assert "lower-case letters" in misspelt.content.decode()
    response = client.post("/jobs/new/", {**FORM, "host": "bench-01", "tablespaces": "fast, slow"})
    job = Job.objects.get()
    assert response.status_code == 302 and job.tablespaces == ["fast", "slow"]


def test_a_catalog_workload_from_the_form_keeps_its_own_tablespaces(client, bob):
    client.force_login(bob)
    form = {
        **FORM,
        "catalog": "e3-key-insert",
        "params": "table_tablespace = fast\nindex_tablespace = slow",
        "tablespaces": "spare",
    }
    response = client.post("/jobs/new/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Job.objects.get().tablespaces == ["spare", "fast", "slow"]


CUSTOM = {
    **{k: v for k, v in FORM.items() if k != "builtin"},
    "workload_name": "mixed",
    "script_0_name": "read.sql",
    "script_0_weight": "9",
    "script_0_body": "\\set id random(1, 100000)\r\nSELECT * FROM items WHERE id = :id;\r\n",
    "script_1_name": "write.sql",
    "script_1_weight": "1",
    "script_1_body": "\\set id random(1, 100000)\r\nUPDATE items SET n = n + 1 WHERE id = :id;\r\n",
    "setup": "CREATE TABLE items AS SELECT g AS id, 0 AS n FROM generate_series(1, 100000) g;\n"
    "---\nCREATE INDEX ON items (id);\n",
}


def test_it_queues_custom_scripts_with_their_weights_as_the_api_stores_them(client, bob):
    client.force_login(bob)
    response = client.post("/jobs/new/", CUSTOM)
    assert response.status_code == 302, response.content.decode()[:3000]
    from_form = Job.objects.get()
    assert [(s["name"], s["weight"]) for s in from_form.workload["scripts"]] == [
        ("read.sql", 9),
        ("write.sql", 1),
    ]
    assert from_form.workload["setup"] == [
        "CREATE TABLE items AS SELECT g AS id, 0 AS n FROM generate_series(1, 100000) g;",
        "CREATE INDEX ON items (id);",
    ]
    # The same workload queued through the API is stored alike.
    workload = {
        "name": "mixed",
        "query_mode": "prepared",
        "scripts": [
            {"name": "read.sql", "weight": 9, "body": CUSTOM["script_0_body"].replace("\r", "")},
            {"name": "write.sql", "weight": 1, "body": CUSTOM["script_1_body"].replace("\r", "")},
        ],
        "setup": from_form.workload["setup"],
    }
    api = APIClient()
    api.force_login(bob)
    body = {"versions": ["13", "14"], "workload": workload, "clients": [1], "duration_s": 5}
    assert api.post("/api/v1/jobs/", body, format="json").status_code == 201
    from_api = Job.objects.exclude(pk=from_form.pk).get()
    assert from_form.workload == from_api.workload
    assert "builtin" not in CUSTOM and from_form.workload["builtin"] == ""


def test_it_shows_a_refused_meta_command_next_to_its_script_and_queues_nothing(client, bob):
    client.force_login(bob)
    page = client.post("/jobs/new/", {**CUSTOM, "script_1_body": "SELECT 1;\n\\shell id\n"})
    assert page.status_code == 200 and Job.objects.count() == 0
    form = page.context["form"]
    assert list(form.errors) == ["script_1_body"]
    [message] = form.errors["script_1_body"]
    assert message.startswith("scripts[1].body: line 2: pgbench \\shell")
    html = page.content.decode()
    assert html.index("scripts[1].body: line 2: pgbench \\shell") > html.index("scripts[1]</th>")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"setup": "SELECT 1;\n---\nSELECT 2;\n\\! id\n"},
            "setup",
            "setup[1]: line 2: psql meta-command \\!",
        ),
        (
            {"script_2_name": "third.sql"},
            "script_2_body",
            "scripts[2]: A script needs a builtin name or a body.",
        ),
        (
            {"script_0_weight": "0", "script_1_weight": "0"},
            "script_0_weight",
            "scripts: At least one script needs a weight above 0.",
        ),
        (
            {"script_1_weight": "-1"},
            "script_1_weight",
            "scripts[1].weight: Ensure this value is greater than or equal to 0.",
        ),
        ({"workload_name": "two words"}, "workload_name", "Use 1 to 200 letters"),
    ],
)
def test_it_names_the_setup_step_or_script_row_the_api_refuses(client, bob, change, field, message):
    client.force_login(bob)
    page = client.post("/jobs/new/", {**CUSTOM, **change})
    assert page.status_code == 200 and Job.objects.count() == 0
    errors = page.context["form"].errors
    assert list(errors) == [field]
    assert errors[field][0].startswith(message), errors[field]


def test_it_refuses_custom_scripts_with_a_catalog_workload(client, bob):
    client.force_login(bob)
    page = client.post("/jobs/new/", {**CUSTOM, "catalog": "e5-read-only"})
    assert page.status_code == 200 and Job.objects.count() == 0
    errors = page.context["form"].errors
    assert "Scripts are for a custom workload" in errors["script_0_body"][0]
    assert "Setup is for a custom workload" in errors["setup"][0]
