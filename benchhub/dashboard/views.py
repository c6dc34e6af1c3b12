"""Page views."""

from functools import cache
from typing import Any
from urllib.parse import urlencode

import markdown as markdown_lib
import nh3
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from benchhub.compare.selectors import RecentComparison, comparison_recent
from benchhub.dashboard import query
from benchhub.errors import ApplicationError
from benchhub.hosts.selectors import host_set_aside_list
from benchhub.jobs.selectors import job_pending_list, queue_status
from benchhub.results.selectors import run_dimensions, run_list

HOME_RUNS = 25
HOME_COMPARISONS = 5


def home(request: HttpRequest) -> HttpResponse:
    """The comparisons just measured with their verdicts, the queue and the agents (home.js
    keeps those two live), quick compare, then recent runs (`?tag=a,b` or `?tag=a&tag=b`: those
    carrying every one of those review tags); with no run yet, the jobs that will bring one."""
    try:
        tags, problem = query.tags(request.GET), ""
    except ApplicationError as exc:
        tags, problem = [], exc.detail
    runs = (
        run_list(filters={"tag": tags})
        .prefetch_related("run_tags__tag")
        .order_by("-created_at", "-id")[:HOME_RUNS]
    )
    status = queue_status()
    dimensions = run_dimensions()
    context = {
        "runs": runs,
        "tags": tags,
        "tag_problem": problem,
        "status": status,
        "dimensions": dimensions,
        "measured": [list(triple) for triple in dimensions.measured],
        "set_aside": host_set_aside_list(),
        "comparisons": [_comparison_row(c) for c in comparison_recent(limit=HOME_COMPARISONS)],
        "pending": job_pending_list() if not runs else [],
    }
    return render(request, "dashboard/home.html", context)


def _comparison_row(recent: RecentComparison) -> dict[str, Any]:
    """One line of Home's latest comparisons: what was compared, a link to the Compare page
    (the same selection, so the same verdicts), and each version's verdict over its curve."""
    params = {
        "workload": recent.workload,
        "host": recent.host,
        "versions": ",".join(recent.versions),
    }
    return {
        "title": f"{recent.workload} on {recent.host}",
        "labels": [s.label for s in recent.comparison.series],
        "url": f"{reverse('compare')}?{urlencode(params, safe=',')}",
        "job": recent.job,
        "verdicts": [
            {"label": v.label, "verdict": v.curve.verdict if v.curve else "", "text": v.summary}
            for v in recent.assessment.versions
        ],
    }


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and `make up`: answers once the database does."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


DOC_TAGS = {
    *("p", "a", "code", "pre", "em", "strong", "ul", "ol", "li", "blockquote", "br"),
    *("h1", "h2", "h3", "h4", "table", "thead", "tbody", "tr", "th", "td"),
}


@cache
def _statistics_html() -> str:
    text = (settings.BASE_DIR / "docs" / "statistics.md").read_text()
    html = markdown_lib.markdown(text, extensions=["tables", "fenced_code"])
    return nh3.clean(html, tags=DOC_TAGS, attributes={"a": {"href"}})


def docs_statistics(request: HttpRequest) -> HttpResponse:
    """GET /docs/statistics/: docs/statistics.md, the verdicts' method, as a page (the compare
    page's "how this was computed" links here)."""
    return render(
        request, "dashboard/doc.html", {"title": "Statistics", "html": _statistics_html()}
    )
