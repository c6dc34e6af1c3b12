"""Queueing a job from the web form, and following it on its page."""

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
