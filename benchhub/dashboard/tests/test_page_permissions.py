"""Pages: reading is open, writing needs a signed-in person, every form needs its CSRF token,
and the staff paths (the admin) refuse everyone else."""

import re

import pytest
from django.test import Client

from benchhub.jobs.models import Job
from benchhub.review.models import Comment
from benchhub.testing.payloads import run_payload

WRITES = [
    ("get", "/jobs/new/"),
    ("post", "/jobs/new/"),
    ("get", "/import/"),
    ("post", "/import/"),
    ("get", "/import/summary/"),
    ("post", "/jobs/{job}/cancel/"),
    ("post", "/schedules/1/enable/"),
    ("get", "/schedules/1/edit/"),
    ("post", "/schedules/1/edit/"),
    ("post", "/runs/{run}/requeue/"),
    ("post", "/runs/{run}/comments/"),
    ("post", "/runs/{run}/tags/"),
    ("post", "/runs/{run}/tags/remove/"),
    ("post", "/runs/{run}/marks/"),
    ("post", "/review/comments/"),
    ("get", "/regressions/subscriptions/"),
    ("post", "/regressions/subscriptions/add/"),
    ("post", "/regressions/subscriptions/1/remove/"),
    ("post", "/regressions/webhooks/add/"),
    ("post", "/regressions/webhooks/1/remove/"),
    ("post", "/regressions/1/state/"),
    ("get", "/account/tokens/"),
    ("post", "/account/tokens/"),
    ("post", "/account/tokens/abcd1234/revoke/"),
]


@pytest.fixture
def world(agent, bob):
    run = run_payload()
    assert agent.client.post("/api/v1/runs/", run, format="json").status_code == 201
    client = Client()
    client.force_login(bob)
    job = client.post(
        "/api/v1/jobs/",
        {"versions": ["13"], "workload": {"name": "select-only", "builtin": "select-only"},
         "clients": [1], "duration_s": 2},
        content_type="application/json",
    )  # fmt: skip
    assert job.status_code == 201, job.content
    return {"run": run["run_uuid"], "job": job.json()["id"]}


def test_it_sends_anonymous_visitors_to_sign_in_for_every_write(world):
    client = Client()
    for method, path in WRITES:
        response = getattr(client, method)(path.format(**world), {"body": "x", "name": "x"})
        assert response.status_code == 302, path
        assert response["Location"].startswith("/accounts/login/"), path
    assert Job.objects.get().state == "queued" and not Comment.objects.exists()


def test_it_needs_the_csrf_token_on_every_form_post(world, bob, alice):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(bob)
    for method, path in WRITES:
        if method == "post":
            assert strict.post(path.format(**world), {"body": "x"}).status_code == 403, path
    # The session's API calls need it too (DRF's SessionAuthentication); tokens do not use cookies.
    assert strict.post("/api/v1/tokens/", {"name": "x"}).status_code == 403
    assert Job.objects.get().state == "queued" and not Comment.objects.exists()


def test_it_puts_a_csrf_token_in_every_form_a_page_shows(world, bob):
    client = Client()
    client.force_login(bob)
    pages = ["/", f"/runs/{world['run']}/", f"/jobs/{world['job']}/", "/jobs/new/", "/import/",
             "/import/summary/", "/accounts/login/", "/regressions/subscriptions/",
             "/account/tokens/"]  # fmt: skip
    seen = 0
    for page in pages:
        html = client.get(page).text
        forms = re.findall(r"<form[^>]*method=\"post\"[^>]*>.*?</form>", html, flags=re.S)
        for form in forms:
            assert "csrfmiddlewaretoken" in form, (page, form[:200])
        seen += len(forms)
    assert seen >= 10
