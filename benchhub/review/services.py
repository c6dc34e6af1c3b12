"""Writes of team review: comments, tags, marks. Each records a ReviewEvent in its transaction."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from benchhub.errors import ApplicationError
from benchhub.hosts.access import HostForbidden, host_may_run
from benchhub.regressions.services import detect_enqueue
from benchhub.results.models import Run
from benchhub.review.models import TAG_NAME, Comment, ReviewEvent, RunTag, Tag

MAX_BODY = 20000
EXCERPT = 200


class ReviewInvalid(ApplicationError):
    """The request cannot be carried out; the detail says why, for the person."""


def _event(*, actor: Any, verb: str, run: Run | None = None, key: str = "", detail: str = ""):
    return ReviewEvent.objects.create(
        actor=actor, verb=verb, run=run, comparison_key=key, detail=detail[:EXCERPT]
    )


def comment_add(
    *, author: Any, body: str, run: Run | None = None, comparison_key: str = ""
) -> Comment:
    """Add a Markdown comment to a run or to a comparison (exactly one). One transaction."""
    body = body.strip()
    if not body:
        raise ReviewInvalid("invalid", "A comment needs some text.", field="body")
    if len(body) > MAX_BODY:
        raise ReviewInvalid("invalid", f"A comment is at most {MAX_BODY} characters.", field="body")
    if (run is None) == (not comparison_key):
        raise ReviewInvalid("invalid", "A comment belongs to a run or to a comparison.")
    with transaction.atomic():
        comment = Comment.objects.create(
            author=author, body=body, run=run, comparison_key=comparison_key
        )
        _event(actor=author, verb="commented", run=run, key=comparison_key, detail=body)
    return comment


def _tag_name(name: str) -> str:
    name = name.strip().lower()
    try:
        TAG_NAME(name)
    except ValidationError as exc:
        raise ReviewInvalid("invalid", " ".join(exc.messages), field="name") from None
    return name


def run_tag_add(*, run: Run, name: str, actor: Any) -> RunTag:
    """Tag a run, creating the tag on first use. Tagging twice is a no-op (no second event)."""
    name = _tag_name(name)
    with transaction.atomic():
        tag, _ = Tag.objects.get_or_create(name=name)
        run_tag, created = RunTag.objects.get_or_create(
            run=run, tag=tag, defaults={"added_by": actor}
        )
        if created:
            _event(actor=actor, verb="tagged", run=run, detail=name)
    return run_tag


def run_tag_remove(*, run: Run, name: str, actor: Any) -> bool:
    """Remove a tag from a run; False when the run did not have it. The tag itself stays."""
    name = name.strip().lower()
    with transaction.atomic():
        deleted, _ = RunTag.objects.filter(run=run, tag__name=name).delete()
        if deleted:
            _event(actor=actor, verb="untagged", run=run, detail=name)
    return bool(deleted)


def run_mark(
    *,
    run: Run,
    baseline: bool | None = None,
    invalid: bool | None = None,
    unsteady_explained: bool | None = None,
    actor: Any,
    reason: str = "",
) -> Run:
    """Set or clear a run's baseline, invalid and unsteady_explained marks (None leaves a mark
    as it is). Only a change is recorded, one event per mark; comparisons leave out invalid
    runs unless asked, and call no verdict at a level where a repeat's throughput moved inside
    its run until the run is marked explained (the reason says why it moved).

    The invalid mark hides a run's data, so it is kept to those with the right to run jobs on
    the run's host (HostForbidden, 403, otherwise) and needs a reason (`invalid`, 400); it is
    reversible: marking a run valid again takes the same right and a reason, and both stay in
    the review log.

    A change of the baseline or invalid mark queues change detection of the run's series on
    commit.
    """
    _check_explained(run=run, unsteady_explained=unsteady_explained, actor=actor, reason=reason)
    if invalid is not None and invalid != run.invalid:
        if not host_may_run(person=actor, host=run.host):
            raise HostForbidden(
                "forbidden_host",
                f"Only those who may run jobs on host '{run.host.name}' change its runs' invalid "
                "mark.",
                field="invalid",
            )
        if not reason.strip():
            raise ReviewInvalid(
                "invalid", "Say why the run is (or is no longer) invalid.", field="reason"
            )
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        changed = []
        marks = (
            ("baseline", baseline),
            ("invalid", invalid),
            ("unsteady_explained", unsteady_explained),
        )
        for field, value in marks:
            if value is None or getattr(locked, field) == value:
                continue
            setattr(locked, field, value)
            changed.append(field)
            verb = _VERBS[field][bool(value)]
            _event(actor=actor, verb=verb, run=locked, detail=reason.strip())
        if changed:
            locked.save(update_fields=changed)
        if set(changed) - {"unsteady_explained"}:
            # A baseline mark anchors change detection of the run's series, and an invalid run
            # leaves it: detect again.
            transaction.on_commit(lambda: detect_enqueue(run_id=locked.pk))
    for field in ("baseline", "invalid", "unsteady_explained"):
        setattr(run, field, getattr(locked, field))
    return run


_VERBS = {
    "baseline": ("unmarked_baseline", "marked_baseline"),
    "invalid": ("unmarked_invalid", "marked_invalid"),
    "unsteady_explained": ("unexplained_unsteady", "explained_unsteady"),
}


def _check_explained(*, run: Run, unsteady_explained: bool | None, actor: Any, reason: str) -> None:
    """Explaining a run's unsteady throughput lets its verdicts be called again: the same right
    as the invalid mark, and a reason (what moved the throughput, or why it no longer holds)."""
    if unsteady_explained is None or unsteady_explained == run.unsteady_explained:
        return
    if not host_may_run(person=actor, host=run.host):
        raise HostForbidden(
            "forbidden_host",
            f"Only those who may run jobs on host '{run.host.name}' explain its runs' unsteady "
            "throughput.",
            field="unsteady_explained",
        )
    if not reason.strip():
        raise ReviewInvalid(
            "invalid",
            "Say why the throughput moved inside the run (or why that no longer holds).",
            field="reason",
        )
