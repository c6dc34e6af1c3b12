"""A comparison has its own comment thread, shown on its compare page."""

import json

from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.review.models import Comment
from benchhub.testing.payloads import run_payload


def test_it_shows_a_comment_on_a_comparison_on_its_page(client, bob, agent):
    for version in ("13.3", "14.0"):
        payload = run_payload(version=version)
        agent.client.post(
            "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
        )
        run_aggregate(run_id=Run.objects.get(uuid=payload["run_uuid"]).pk)
    url = "/compare/?workload=select-only&host=bench-01&versions=13.3,14.0"
    client.force_login(bob)
    page = client.get(url).content.decode()
    assert "No comments yet." in page
    query = url.split("?", 1)[1]
    response = client.post(
        "/review/comments/", {"comparison_key": query, "body": "14 *wins* here", "next": url}
    )
    assert response.status_code == 302 and response.url == url
    assert Comment.objects.filter(run__isnull=True).count() == 1
    assert "<em>wins</em>" in client.get(url).content.decode()
