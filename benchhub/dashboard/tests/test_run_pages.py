"""The run page in full, queueing a run again, the diff page, and the review forms."""

import json

import pytest
from django.test import Client

from benchhub.jobs.models import Job
from benchhub.results.models import ResultOutput, Run
from benchhub.review.models import Comment, ReviewEvent
from benchhub.testing.payloads import run_payload


def telemetry(seconds: int = 3) -> list[dict]:
    return [
        {
            "t": float(t),
            "cpu_user_pct": 40.0 + t,
            "cpu_system_pct": 10.0,
            "cpu_iowait_pct": 1.5,
            "cpu_idle_pct": 48.5 - t,
            "disk_util_pct": 12.0,
            "disk_write_bytes_per_s": 5_000_000.0,
        }
        for t in range(1, seconds + 1)
    ]


def upload(agent, **overrides) -> Run:
    payload = run_payload(**overrides)
    for result in payload["results"]:
        result["telemetry"] = telemetry()
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return Run.objects.get(uuid=payload["run_uuid"])


def test_it_shows_everything_about_a_run(agent, client):
    run = upload(agent, version="15.4")
    html = client.get(f"/runs/{run.uuid}/").content.decode()
    # non-default settings with their source, not the defaults
    assert "shared_buffers" in html and "configuration file" in html
    assert "All settings (SHOW ALL, 5)" in html
    # charts for each level: progress and telemetry
    assert f'data-charts="/runs/{run.uuid}/charts/"' in html
    charts = client.get(f"/runs/{run.uuid}/charts/").json()
    assert [c["id"] for c in charts] == [
        "chart-progress-1",
        "chart-telemetry-1",
        "chart-progress-2",
        "chart-telemetry-2",
    ]
    progress = charts[0]["figure"]["data"]
    assert [t["name"] for t in progress if t.get("showlegend", True)] == ["repeat 1", "repeat 2"]
    assert "SELECT abalance FROM pgbench_accounts" in html
    assert "number of transactions actually processed" in html
    assert "generate 0.21 s" in html
    assert "js/run." in html and "vendor/plotly/plotly.min." in html


def test_it_reads_the_run_page_in_a_bounded_number_of_queries(
    agent, client, django_assert_max_num_queries
):
    small = upload(agent, clients=(1,), repeats=1)
    big = upload(agent, clients=(1, 2, 4, 8), repeats=3)
    with django_assert_max_num_queries(12) as small_queries:
        client.get(f"/runs/{small.uuid}/")
    with django_assert_max_num_queries(len(small_queries.captured_queries)):
        client.get(f"/runs/{big.uuid}/")
    with django_assert_max_num_queries(12) as small_queries:
        client.get(f"/runs/{small.uuid}/charts/")
    with django_assert_max_num_queries(len(small_queries.captured_queries)):
        assert len(client.get(f"/runs/{big.uuid}/charts/").json()) == 8


def test_it_escapes_raw_output(agent, client):
    payload_run = upload(agent)
    first = ResultOutput.objects.filter(
        result__run=payload_run, result__repeat=1, result__clients=1
    )
    first.update(text="<script>alert(1)</script>")
    html = client.get(f"/runs/{payload_run.uuid}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


def test_it_queues_the_same_job_again(agent, client, bob):
    run = upload(agent, version="16.1", clients=(1, 4), repeats=3)
    client.force_login(bob)
    response = client.post(f"/runs/{run.uuid}/requeue/")
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.versions == ["16.1"] and job.clients == [1, 4] and job.repeats == 3
    assert job.scale == 1 and job.duration_s == 2.0 and job.host.name == "bench-01"
    assert job.workload["builtin"] == "select-only" and job.workload["query_mode"] == "prepared"
    assert job.threads_policy == "clients" and job.created_by == bob


def test_it_needs_sign_in_and_a_post_to_queue_again(agent, client, bob):
    run = upload(agent)
    assert client.post(f"/runs/{run.uuid}/requeue/")["Location"].startswith("/accounts/login/")
    client.force_login(bob)
    assert client.get(f"/runs/{run.uuid}/requeue/").status_code == 405
    assert not Job.objects.exists()


def test_it_needs_csrf_on_review_forms(agent, bob):
    run = upload(agent)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(bob)
    assert strict.post(f"/runs/{run.uuid}/comments/", {"body": "x"}).status_code == 403
    assert not Comment.objects.exists()


def test_it_comments_tags_and_marks_from_the_run_page(agent, client, bob):
    run = upload(agent)
    client.force_login(bob)
    client.post(f"/runs/{run.uuid}/comments/", {"body": "**swap** was on"})
    client.post(f"/runs/{run.uuid}/tags/", {"name": "swap"})
    client.post(f"/runs/{run.uuid}/marks/", {"invalid": "1", "reason": "swapping"})
    html = client.get(f"/runs/{run.uuid}/").content.decode()
    assert "<strong>swap</strong> was on" in html
    assert 'class="tag"' in html and "Marked invalid" in html
    assert "marked by bob" in html and "swapping" in html
    events = client.get("/review/").content.decode()
    assert "marked invalid" in events and "tagged" in events and "commented" in events


def test_it_refuses_a_bad_tag_with_a_message(agent, client, bob):
    run = upload(agent)
    client.force_login(bob)
    page = client.post(f"/runs/{run.uuid}/tags/", {"name": "<b>"}, follow=True)
    assert "Tag not added" in page.content.decode()
    assert not ReviewEvent.objects.exists()


def test_it_goes_back_to_a_comparison_comments_page_and_never_elsewhere(client, bob):
    client.force_login(bob)
    back = "/compare/?workload=w&host=h&versions=13,14"
    response = client.post(
        "/review/comments/", {"comparison_key": back, "body": "ok", "next": back}
    )
    assert response["Location"] == back
    comment = Comment.objects.get()
    assert comment.comparison_key == "host=h&versions=13,14&workload=w"
    away = client.post(
        "/review/comments/",
        {"comparison_key": back, "body": "again", "next": "https://evil.example/"},
    )
    assert away["Location"] == "/"


def test_it_renders_the_comparison_thread_for_the_compare_page(client, bob, rf):
    from django.template import Context, Template

    from benchhub.review.services import comment_add

    comment_add(author=bob, body="_fine_", comparison_key="host=h&versions=13,14&workload=w")
    request = rf.get("/compare/?versions=13,14&workload=w&host=h")
    request.user = bob
    html = Template("{% load review %}{% comparison_thread request.GET.urlencode %}").render(
        Context({"request": request, "user": bob})
    )
    assert "<em>fine</em>" in html and 'name="comparison_key"' in html
    assert 'value="/compare/?versions=13,14&amp;workload=w&amp;host=h"' in html


def test_it_shows_what_differs_on_the_diff_page(agent, client):
    a = upload(agent, version="15.4")
    payload_b = dict(
        version="16.1",
        configuration={
            "settings": {"shared_buffers": "1GB", "max_connections": "100", "jit": "off"},
            "sources": {"shared_buffers": "configuration file", "jit": "command line"},
            "overrides": {},
        },
    )
    b = upload(agent, **payload_b)
    html = client.get(f"/diff/?a={a.uuid}&b={b.uuid}").content.decode()
    differing = html.split('<tr class="differs">')
    names = [part.split("</th>")[0].removeprefix("<th>") for part in differing[1:]]
    assert "version" in names and "shared_buffers" in names and "jit" in names
    assert "max_connections" not in names and "cores" not in names
    assert "(command line)" in html
    assert client.get(f"/diff/?a={a.uuid}&b=not-a-uuid").status_code == 200
    assert (
        client.get(f"/diff/?a={a.uuid}&b=00000000-0000-0000-0000-000000000000").status_code == 404
    )


@pytest.mark.parametrize("url", ["/review/", "/diff/", "/accounts/login/"])
def test_it_renders_the_review_pages(client, db, url):
    assert client.get(url).status_code == 200


def test_it_says_when_the_agent_raised_max_connections_itself(agent, client):
    limits = {"max_connections": 9138, "max_connections_raised_from": 100, "nofile_soft": 9999}
    raised = upload(agent, version="14beta1", client_limits=limits)
    row = client.get(f"/runs/{raised.uuid}/").content.decode().split('id="settings-raised"')
    assert len(row) == 2 and "from 100 (the default) to 9138" in row[1].split("</tr>")[0]
    # The job's own value is kept as given: nothing to say.
    kept = upload(agent, version="13.3", client_limits={"max_connections": 11000})
    assert 'id="settings-raised"' not in client.get(f"/runs/{kept.uuid}/").content.decode()


TABLESPACE = {
    "name": "fast",
    "location": "/mnt/nvme1/benchhub/benchhub-7-1-v0",
    "dev": "259:1",
    "mount_point": "/mnt/nvme1",
    "fstype": "xfs",
    "source": "/dev/nvme1n1",
    "device": "nvme1n1",
    "measured_s": 60.0,
    "read_bytes_per_s": 0.0,
    "write_bytes_per_s": 52428800.0,
    "read_iops": 0.0,
    "write_iops": 812.5,
    "util_pct": 87.5,
}


def test_it_shows_each_tablespace_with_its_device_and_io(agent, client):
    run = upload(agent, tablespaces=[TABLESPACE])
    row = client.get(f"/runs/{run.uuid}/").content.decode().split('id="tablespaces"')
    assert len(row) == 2, "no tablespaces row"
    text = row[1].split("</tr>")[0]
    assert "<code>fast</code>" in text and "device nvme1n1 (259:1, xfs on /mnt/nvme1)" in text
    assert "50.0\xa0MB/s (812.5 IOPS)" in text and "87.5% busy" in text
    plain = upload(agent)
    assert 'id="tablespaces"' not in client.get(f"/runs/{plain.uuid}/").content.decode()


def test_it_refuses_tablespace_evidence_it_cannot_read(agent):
    response = agent.client.post(
        "/api/v1/runs/",
        data=json.dumps(run_payload(tablespaces=[{**TABLESPACE, "util_pct": 130}])),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "tablespaces[0].util_pct" in response.json()["fields"], response.json()
    assert not Run.objects.exists()
