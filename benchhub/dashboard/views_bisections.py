"""Bisection pages: the list, one bisection (live while it runs), the form to start one."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchhub.api.errors import flatten_errors
from benchhub.bisections import selectors, services
from benchhub.bisections.models import Bisection, BisectionCommit
from benchhub.bisections.origins import (
    ORIGIN_FIELDS,
    Origin,
    OriginError,
    origin_defaults,
    origin_get,
)
from benchhub.bisections.serializers import BisectionInSerializer
from benchhub.dashboard.forms import BisectionForm
from benchhub.errors import ApplicationError
from benchhub.jobs.models import Job

LIST_PAGE = 100


def bisection_list(request: HttpRequest) -> HttpResponse:
    bisections = selectors.bisection_list()[:LIST_PAGE]
    return render(request, "dashboard/bisections.html", {"bisections": bisections})


def bisection_detail(request: HttpRequest, bisection_id: int) -> HttpResponse:
    bisection = selectors.bisection_get(bisection_id=bisection_id)
    if bisection is None:
        raise Http404(f"No bisection {bisection_id}")
    commits = list(bisection.commits.all())
    jobs = list(bisection.jobs.all())
    tried = sorted((c for c in commits if c.step is not None), key=lambda c: c.step or 0)
    context = {
        "bisection": bisection,
        "live": bisection.state in Bisection.OPEN,
        "tried": [_row(bisection, commit, jobs) for commit in tried],
        "culprit": next((c for c in commits if c.sha == bisection.culprit), None),
        "range_size": len(commits),
        "compare_url": _compare_url(bisection),
        "jobs": jobs,
    }
    return render(request, "dashboard/bisection.html", context)


def _row(bisection: Bisection, commit: BisectionCommit, jobs: list[Job]) -> dict[str, Any]:
    """A commit tried, with the last job that measured it and that job's run of it."""
    version = services.step_version(recipe_name=bisection.recipe.name, sha=commit.sha)
    job = next((j for j in reversed(jobs) if version in j.versions), None)
    run = None
    if job is not None:
        run = next((r for r in job.runs.all() if r.job_attempt == job.attempt), None)
    return {"commit": commit, "version": version, "job": job, "run": run}


def _compare_url(bisection: Bisection) -> str:
    """The compare page of the two ends, once the range is listed."""
    if not bisection.good_sha:
        return ""
    name = bisection.recipe.name
    versions = [
        services.step_version(recipe_name=name, sha=sha)
        for sha in (bisection.good_sha, bisection.bad_sha)
    ]
    query = {
        "host": bisection.host.name,
        "workload": str(bisection.workload.get("name", "")),
        "versions": ",".join(versions),
    }
    return "/compare/?" + urlencode(query)


@login_required
def bisection_new(request: HttpRequest) -> HttpResponse:
    """The form, prefilled from the query string: two runs (`good_run`, `bad_run`: the compare
    page's "find the commit") or a regression (`regression`) give every field, or `recipe`,
    `good`, `bad` and `host` some."""
    initial: dict[str, Any] = {
        key: request.GET[key] for key in ("recipe", "good", "bad", "host") if key in request.GET
    }
    origin, problem = (None, "") if request.method == "POST" else _origin(request.GET)
    if origin is not None:
        try:
            defaults = origin_defaults(origin)
        except OriginError as exc:
            origin, problem = None, exc.message
        else:
            initial.update({k: v for k, v in defaults.items() if k in BisectionForm.base_fields})
            initial.update({k: request.GET[k] for k in ORIGIN_FIELDS if request.GET.get(k)})
    form = BisectionForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        body = BisectionInSerializer(data=form.bisection_request())
        if body.is_valid():
            try:
                bisection = services.bisection_start(body.validated_data, created_by=request.user)
            except ApplicationError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.detail)
            else:
                return redirect("bisection", bisection_id=bisection.pk)
        for path, problems in flatten_errors(body.errors).items():
            field = path.split(".")[0].split("[")[0]
            field = "builtin" if field == "workload" and "builtin" in form.fields else field
            form.add_error(field if field in form.fields else None, "; ".join(problems))
    if request.method == "POST" and form.from_origin:  # shown again: what it starts from
        origin, _ = _origin(request.POST)  # why not, the API's errors on the form say
    context = {
        "form": form,
        "origin": origin if form.from_origin else None,
        # Why the runs or regression named cannot start one.
        "problem": problem,
    }
    return render(request, "dashboard/bisection_new.html", context)


def _origin(source: Any) -> tuple[Origin | None, str]:
    """The runs or regression named in `source`, or why they cannot start a bisection."""
    named = {key: source.get(key) or None for key in ORIGIN_FIELDS}
    if not any(named.values()):
        return None, ""
    try:
        regression = int(named["regression"]) if named["regression"] else None
    except ValueError:
        return None, f"{named['regression']!r} is not a regression's id."
    try:
        return origin_get(
            good_run=named["good_run"], bad_run=named["bad_run"], regression=regression
        ), ""
    except OriginError as exc:
        return None, exc.message


@login_required
def bisection_cancel(request: HttpRequest, bisection_id: int) -> HttpResponse:
    if request.method == "POST":
        try:
            services.bisection_cancel(
                bisection_id=bisection_id, actor=request.user.get_username(), by=request.user
            )
        except ApplicationError as exc:
            flash.error(request, exc.detail)
    return redirect("bisection", bisection_id=bisection_id)
