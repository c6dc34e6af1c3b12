"""Comments, tags and marks, and the log of who did what."""

import json

import pytest

from benchhub.results.models import Run
from benchhub.review import selectors, services
from benchhub.review.models import ReviewEvent
from benchhub.testing.payloads import run_payload


@pytest.fixture
def run(agent):
    payload = run_payload(version="14.0")
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return Run.objects.get(uuid=payload["run_uuid"])


def test_it_adds_a_comment_to_a_run_and_logs_it(run, bob):
    services.comment_add(author=bob, body="  looks noisy  ", run=run)
    [comment] = selectors.comment_list(run=run)
    assert comment.body == "looks noisy" and comment.author == bob
    [event] = ReviewEvent.objects.all()
    assert (event.actor, event.verb, event.run, event.detail) == (
        bob,
        "commented",
        run,
        comment.body,
    )


def test_it_keeps_comparison_threads_apart_from_run_threads(run, bob):
    services.comment_add(author=bob, body="on the comparison", comparison_key="versions=13,14")
    services.comment_add(author=bob, body="on the run", run=run)
    thread = selectors.comment_list(comparison_key="versions=13,14")
    assert [c.body for c in thread] == ["on the comparison"]
    assert [c.body for c in selectors.comment_list(run=run)] == ["on the run"]


@pytest.mark.parametrize("body", ["", "   ", "x" * 20001])
def test_it_refuses_empty_and_huge_comments(run, bob, body):
    with pytest.raises(services.ReviewInvalid):
        services.comment_add(author=bob, body=body, run=run)


def test_it_refuses_a_comment_with_two_targets_or_none(run, bob):
    with pytest.raises(services.ReviewInvalid):
        services.comment_add(author=bob, body="x", run=run, comparison_key="versions=1")
    with pytest.raises(services.ReviewInvalid):
        services.comment_add(author=bob, body="x")


def test_it_tags_once_and_untags(run, bob, alice):
    services.run_tag_add(run=run, name="Noisy-Neighbour", actor=bob)
    services.run_tag_add(run=run, name="noisy-neighbour", actor=alice)
    assert [t.tag.name for t in selectors.run_tag_list(run=run)] == ["noisy-neighbour"]
    assert selectors.run_tag_list(run=run)[0].added_by == bob
    assert services.run_tag_remove(run=run, name="noisy-neighbour", actor=alice) is True
    assert services.run_tag_remove(run=run, name="noisy-neighbour", actor=alice) is False
    verbs = list(ReviewEvent.objects.order_by("at", "id").values_list("verb", "actor__username"))
    assert verbs == [("tagged", "bob"), ("untagged", "alice")]


@pytest.mark.parametrize("name", ["", "has space", "<b>", "-leading", "x" * 51])
def test_it_refuses_bad_tag_names(run, bob, name):
    with pytest.raises(services.ReviewInvalid):
        services.run_tag_add(run=run, name=name, actor=bob)


def test_it_marks_and_unmarks_with_who_and_why(run, bob, alice):
    services.run_mark(run=run, invalid=True, actor=bob, reason="thermal throttling")
    services.run_mark(run=run, invalid=True, baseline=True, actor=alice)
    run.refresh_from_db()
    assert run.invalid and run.baseline
    review = selectors.run_review(run=run)
    assert review.invalid_event.actor == bob
    assert review.invalid_event.detail == "thermal throttling"
    assert review.baseline_event.actor == alice
    services.run_mark(run=run, invalid=False, actor=alice, reason="rerun was the same")
    run.refresh_from_db()
    assert not run.invalid and run.baseline
    verbs = list(ReviewEvent.objects.order_by("at", "id").values_list("verb", flat=True))
    assert verbs == ["marked_invalid", "marked_baseline", "unmarked_invalid"]
