"""Review pages: the forms of a run's review section, comparison comments, the review log.

Every write is a POST from a signed-in person (CSRF-checked by the middleware), calls one
service, and redirects back; a refused request comes back as a message on the page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from benchhub.dashboard import query
from benchhub.errors import ApplicationError
from benchhub.results.models import Run
from benchhub.results.selectors import run_get
from benchhub.review import selectors, services
from benchhub.review.keys import comparison_key

EVENTS_PAGE = 200


def _run(run_uuid) -> Run:
    run = run_get(run_uuid=run_uuid)
    if run is None:
        raise Http404(f"No run {run_uuid}")
    return run


def _back_to_run(run: Run, anchor: str = "review") -> HttpResponse:
    response = redirect("run", run_uuid=run.uuid)
    response["Location"] += f"#{anchor}"
    return response


@login_required
@require_POST
def run_comment_add(request: HttpRequest, run_uuid) -> HttpResponse:
    run = _run(run_uuid)
    try:
        services.comment_add(author=request.user, body=request.POST.get("body", ""), run=run)
    except ApplicationError as exc:
        messages.error(request, exc.detail)
    return _back_to_run(run, "comments")


@login_required
@require_POST
def run_tag_add(request: HttpRequest, run_uuid) -> HttpResponse:
    run = _run(run_uuid)
    try:
        services.run_tag_add(run=run, name=request.POST.get("name", ""), actor=request.user)
    except ApplicationError as exc:
        messages.error(request, f"Tag not added: {exc.detail}")
    return _back_to_run(run)


@login_required
@require_POST
def run_tag_remove(request: HttpRequest, run_uuid) -> HttpResponse:
    run = _run(run_uuid)
    services.run_tag_remove(run=run, name=request.POST.get("name", ""), actor=request.user)
    return _back_to_run(run)


@login_required
@require_POST
def run_mark(request: HttpRequest, run_uuid) -> HttpResponse:
    run = _run(run_uuid)
    try:
        services.run_mark(
            run=run,
            baseline=query.flag_or_none(request.POST.get("baseline")),
            invalid=query.flag_or_none(request.POST.get("invalid")),
            actor=request.user,
            reason=request.POST.get("reason", "")[:2000],
        )
    except ApplicationError as exc:
        messages.error(request, exc.detail)
    return _back_to_run(run)


@login_required
@require_POST
def comparison_comment_add(request: HttpRequest) -> HttpResponse:
    """Comment on a comparison, then go back to `next` (only ever a URL of this site)."""
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = "/"
    try:
        key = comparison_key(request.POST.get("comparison_key", ""))
        services.comment_add(
            author=request.user, body=request.POST.get("body", ""), comparison_key=key
        )
    except ApplicationError as exc:
        messages.error(request, exc.detail)
    return redirect(next_url)


def review_events(request: HttpRequest) -> HttpResponse:
    events = selectors.event_list()[:EVENTS_PAGE]
    return render(request, "review/events.html", {"events": events, "limit": EVENTS_PAGE})
