"""The error shape where DRF does not answer: URLs no API pattern matches, and a crash."""

import json

from django.test import RequestFactory

from benchhub.api.views import server_error


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
