"""The workload catalog page, and queueing a catalog workload from the job form."""

from benchhub_runner.jobspec.plan import plan_default

from benchhub.jobs.models import Job
from benchhub.workloads.catalog import catalog_expand, entry_list

FORM = {
    "versions": "13 14",
    "catalog": "",
    "params": "",
    "builtin": "select-only",
    "query_mode": "prepared",
    "scale": "",
    "clients": "",
    "duration_s": "",
    "repeats": "",
    "order": "interleaved",
    "host": "",
    "settings": "",
    "priority": "0",
}


def test_it_lists_every_entry_with_sizes_and_escaped_sql(client, db):
    page = client.get("/workloads/").content.decode()
    for entry in entry_list():
        assert f'id="{entry.id}"' in page
        assert f"/jobs/new/?catalog={entry.id}" in page
    assert "100000000" in page  # e1-pk-lookup's published rows
    assert "SELECT * FROM tbl WHERE id = :id;" in page
    # SQL quotes are escaped, never raw
    assert "format(&#x27;CREATE TABLE %I () INHERITS (t_heap)&#x27;" in page
    assert '<a href="/workloads/">Workloads</a>' in page


def test_it_queues_a_catalog_workload_with_its_defaults(client, bob):
    client.force_login(bob)
    response = client.post("/jobs/new/", {**FORM, "catalog": "e1-pk-lookup"})
    job = Job.objects.get()
    assert response.status_code == 302 and response.url == f"/jobs/{job.pk}/"
    default = catalog_expand(entry_id="e1-pk-lookup")
    assert job.workload["params"] == {"rows": 100000}
    assert (job.clients, job.duration_s) == (default.job["clients"], default.job["duration_s"])
    assert job.config_overrides == default.job["config_overrides"]


def test_it_lets_typed_params_and_fields_override_the_defaults(client, bob):
    client.force_login(bob)
    client.post(
        "/jobs/new/",
        {
            **FORM,
            "catalog": "e3-key-insert",
            "params": "key_type = int8\nprefill_rows = 0\n",
            "clients": "1 4",
        },
    )
    job = Job.objects.get()
    assert job.workload["params"]["key_type"] == "int8" and job.clients == [1, 4]


def test_it_names_a_bad_param_in_the_form(client, bob):
    client.force_login(bob)
    html = client.post(
        "/jobs/new/", {**FORM, "catalog": "e1-pk-lookup", "params": "rows = -5"}
    ).content.decode()
    assert "rows: Must be at least 1." in html and Job.objects.count() == 0
    html = client.post(
        "/jobs/new/", {**FORM, "catalog": "e1-pk-lookup", "params": '{"rows": "x"}'}
    ).content.decode()
    assert "params.rows: Must be a whole number." in html and Job.objects.count() == 0


def test_it_gives_a_blank_custom_job_the_custom_defaults(client, bob):
    client.force_login(bob)
    client.post("/jobs/new/", FORM)
    job = Job.objects.get()
    # Repeats: the plan's one default, whatever the entry point (benchhub_runner.jobspec.plan).
    assert (job.clients, job.repeats, job.scale) == (
        [1, 2, 4, 8, 16, 32],
        plan_default("repeats"),
        1,
    )
    assert job.workload["builtin"] == "select-only"


def test_it_groups_entries_and_preselects_one_in_the_form(client, bob):
    client.force_login(bob)
    html = client.get("/jobs/new/?catalog=e4-write-consume").content.decode()
    assert '<optgroup label="E4">' in html
    assert '<option value="e4-write-consume" selected>' in html
    assert 'id="catalog-defaults"' in html
