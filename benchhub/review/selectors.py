"""Reads of team review: threads, tags, marks with who set them, the event log. All bounded."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, QuerySet

from benchhub.results.models import Run
from benchhub.review.models import Comment, ReviewEvent, RunTag

THREAD_LIMIT = 500
EVENTS_LIMIT = 200


def comment_list(*, run: Run | None = None, comparison_key: str = "") -> QuerySet[Comment]:
    """The thread of a run or of a comparison, oldest first, with authors."""
    comments = Comment.objects.select_related("author").order_by("created_at", "id")
    if run is not None:
        comments = comments.filter(run=run)
    else:
        comments = comments.filter(run__isnull=True, comparison_key=comparison_key)
    return comments[:THREAD_LIMIT]


def run_tag_list(*, run: Run) -> QuerySet[RunTag]:
    return RunTag.objects.filter(run=run).select_related("tag", "added_by").order_by("tag__name")


def runs_tagged(runs: QuerySet[Run], *, tags: Sequence[str]) -> QuerySet[Run]:
    """`runs` narrowed to those carrying every one of `tags` (names, exactly), one EXISTS per
    tag: each is an index lookup of RunTag by tag, and the query stays one query. Registered as
    results.hooks' tag filter, so the apps below review filter by tag without importing it."""
    for name in tags:
        runs = runs.filter(Exists(RunTag.objects.filter(run=OuterRef("pk"), tag__name=name)))
    return runs


def event_list(*, run: Run | None = None) -> QuerySet[ReviewEvent]:
    """Newest first, with actors and runs; the caller slices or paginates."""
    events = ReviewEvent.objects.select_related("actor", "run", "run__build", "run__host")
    return events.filter(run=run) if run is not None else events


@dataclass
class RunReview:
    tags: list[RunTag]
    comments: list[Comment]
    baseline_event: ReviewEvent | None = None
    invalid_event: ReviewEvent | None = None
    events: list[ReviewEvent] = field(default_factory=list)


def run_review(*, run: Run) -> RunReview:
    """Everything the run page shows of its review: tags, thread, the events that set the
    current marks (who marked it, when, why), and the run's recent history. Four queries."""
    events = list(event_list(run=run)[:EVENTS_LIMIT])

    def last(verb: str) -> ReviewEvent | None:
        return next((e for e in events if e.verb == verb), None)

    return RunReview(
        tags=list(run_tag_list(run=run)),
        comments=list(comment_list(run=run)),
        baseline_event=last("marked_baseline") if run.baseline else None,
        invalid_event=last("marked_invalid") if run.invalid else None,
        events=events,
    )
