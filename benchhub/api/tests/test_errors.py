"""The error shape where DRF does not answer: URLs no API pattern matches, and a crash."""

import json

from django.test import RequestFactory

from benchhub.api.errors import exception_handler
from benchhub.api.views import server_error
from benchhub.errors import ApplicationError


def test_it_answers_an_unmatched_api_url_in_the_error_shape(client, db):
    response = client.get("/api/v1/jobs/-1/")
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "detail": "No API resource at /api/v1/jobs/-1/.",
    }


def test_it_keeps_the_html_page_for_other_urls(client, db):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_it_answers_a_crash_under_the_api_in_the_error_shape():
    response = server_error(RequestFactory().get("/api/v1/runs/"))
    assert response.status_code == 500
    assert json.loads(response.content)["error"] == "server_error"


def test_it_renders_a_domain_error_with_its_code_status_and_field():
    error = ApplicationError("no_such_host", "No host named 'x'.", field="host", status=404)
    response = exception_handler(error, {})
    assert response.status_code == 404
    assert response.data == {
        "error": "no_such_host",
        "detail": "No host named 'x'.",
        "fields": {"host": ["No host named 'x'."]},
    }


def test_it_renders_a_domain_error_without_a_field_with_its_class_status():
    class Conflict(ApplicationError):
        status = 409

    response = exception_handler(Conflict("job_state", "Job 3 is already done."), {})
    assert response.status_code == 409
    assert response.data == {"error": "job_state", "detail": "Job 3 is already done."}
