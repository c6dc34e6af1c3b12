"""Run pages: the run list, one run in detail, two runs side by side, queueing a run again (the
import pages are in views_imports)."""

from itertools import groupby
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchhub.builds.provenance import provenance_rows
from benchhub.dashboard import charts_run, query
from benchhub.dashboard.evidence import run_level_context
from benchhub.dashboard.run_diff import run_diff as run_diff_sections
from benchhub.errors import ApplicationError
from benchhub.hosts.tuning import host_tuning
from benchhub.jobs.services import job_create_again
from benchhub.results import selectors
from benchhub.results.evidence import level_evidence
from benchhub.results.excerpts import (
    NO_TEXT,
    OUTPUT_SHOWN_CHARS,
    RESULT_OUTPUTS,
    output_excerpts,
    run_import_head,
    text_heads,
)
from benchhub.results.models import ResultEvidence, Run
from benchhub.results.partitions import run_pruning
from benchhub.results.selectors import ProgressPoints
from benchhub.review.selectors import run_review

RUNS_PAGE = 50


def run_list(request: HttpRequest) -> HttpResponse:
    """GET /runs/[?host=&version=&workload=&status=][&page=n]: runs, newest first, 50 a page;
    the filter's choices are what was measured (selectors.run_dimensions)."""
    statuses = [value for value, _ in Run.Status.choices]
    context: dict[str, Any] = {
        "dimensions": selectors.run_dimensions(),
        "statuses": statuses,
        "params": request.GET,
        "errors": {},
    }
    try:
        filters = query.run_filters(request.GET, statuses=statuses)
    except ApplicationError as exc:
        context.update(errors=exc.fields, page=None)
        return render(request, "dashboard/runs.html", context, status=400)
    runs = selectors.run_list(filters=filters).order_by("-created_at", "-id")
    page = Paginator(runs, RUNS_PAGE).get_page(request.GET.get("page"))
    context.update(page=page, filters=filters, filter_query=urlencode(filters))
    return render(request, "dashboard/runs.html", context)


def _get_run(run_uuid: Any) -> Run:
    run = selectors.run_get(run_uuid=run_uuid)
    if run is None:
        raise Http404(f"No run {run_uuid}")
    return run


def _levels(
    results: list, evidence: dict[int, ResultEvidence], points: dict[int, ProgressPoints]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The results grouped by client level, with each level's evidence, and the charts of
    every level for run.js."""
    levels: list[dict[str, Any]] = []
    charts: list[dict[str, Any]] = []
    for clients, grouped in groupby(results, key=lambda r: r.clients):
        group = list(grouped)
        summary = level_evidence(clients=clients, results=group, evidence=evidence)
        explained = run_level_context(summary, prefix=f"evidence-{clients}")
        charts.extend({"id": key, "figure": fig} for key, fig in explained["figures"].items())
        level = {"clients": clients, "results": group, "charts": [], "evidence": explained}
        for kind, figure in (
            ("progress", charts_run.progress_figure(group, clients, points)),
            ("telemetry", charts_run.telemetry_figure(group, clients)),
        ):
            if figure is not None:
                chart_id = f"chart-{kind}-{clients}"
                level["charts"].append(chart_id)
                charts.append({"id": chart_id, "figure": figure})
        levels.append(level)
    return levels, charts


def _non_default_settings(run: Run) -> list[tuple[str, str, str]]:
    """(name, value, source) of every setting not at its built-in default. Without sources (an
    imported configuration file), the recorded configuration is what was chosen."""
    if not run.setting_sources:
        return [(n, v, "configuration") for n, v in sorted(run.config.settings.items())]
    return [
        (name, value, run.setting_sources.get(name, ""))
        for name, value in sorted(run.settings.items())
        if run.setting_sources.get(name, "default") != "default"
    ]


def _rerunnable(run: Run) -> bool:
    """A summary import knows what it measured only when the table's page named a builtin, its
    scale and its length: then it can be queued again; other runs always can."""
    if run.source != Run.Source.SUMMARY:
        return True
    length = run.duration_s or run.transactions_per_client
    return bool(run.workload.builtin and run.scale and length)


def _run_levels(run: Run, *, with_output: bool) -> tuple[list, list, list]:
    """The run's results, grouped by level with their evidence, and the charts of every level.
    With `with_output`, each result carries the head of its pgbench output (`output_shown`)."""
    # The page draws progress bucket-averaged to a bounded number of points, never every
    # sample a run holds; the OS telemetry (thinned by the chart) is joined to the results.
    results = list(
        selectors.result_list(run=run, with_progress=False, with_output=False, with_telemetry=True)
    )
    if with_output:
        # Each text shows its head, the page's outputs together a bounded amount (excerpts.py):
        # a page is as large as what it shows, and reads as much, not what was imported.
        heads = text_heads(
            source=RESULT_OUTPUTS, owner_ids=[r.pk for r in results], limit=OUTPUT_SHOWN_CHARS
        )
        shown = output_excerpts([heads.get(r.pk, NO_TEXT) for r in results])
        for result, output in zip(results, shown, strict=True):
            result.output_shown = output  # type: ignore[attr-defined]
    points = selectors.progress_points(result_ids=[r.pk for r in results], run_uuid=run.uuid)
    levels, charts = _levels(results, selectors.evidence_by_result(run=run), points)
    return results, levels, charts


def run_detail(request: HttpRequest, run_uuid: str) -> HttpResponse:
    """GET /runs/<uuid>/: the run's tps and latency per level, then what it ran on, its
    settings and each level's evidence. Its charts are not in the page: run.js fetches them
    from run_charts, so that the page's text is drawn without waiting for their data."""
    run = _get_run(run_uuid)
    results, levels, charts = _run_levels(run, with_output=True)
    context = {
        "run": run,
        "import_shown": run_import_head(run=run),
        "results": results,
        "levels": levels,
        "charts_url": reverse("run-charts", args=[run.uuid]) if charts else "",
        "non_default": _non_default_settings(run),
        "build_rows": provenance_rows(run.build),
        "tuning": host_tuning(run.host_facts),
        "all_settings": sorted(run.settings.items()),
        "review": run_review(run=run),
        "rerunnable": _rerunnable(run),
        "pruning": run_pruning(created_at=run.created_at),
    }
    return render(request, "dashboard/run.html", context)


def run_charts(request: HttpRequest, run_uuid: str) -> JsonResponse:
    """GET /runs/<uuid>/charts/: the run page's charts, [{"id": the element to draw in,
    "figure": a plotly figure (dashboard.charts_run, dashboard.evidence)}], in page order."""
    _, _, charts = _run_levels(_get_run(run_uuid), with_output=False)
    return JsonResponse(charts, safe=False)


@login_required
@require_POST
def run_requeue(request: HttpRequest, run_uuid: str) -> HttpResponse:
    """Queue the same job again ("Queue this again" on the run page)."""
    run = _get_run(run_uuid)
    try:
        job = job_create_again(run=run, created_by=request.user)
    except ApplicationError as exc:
        flash.error(request, exc.detail)
        return redirect("run", run_uuid=run.uuid)
    return redirect("job", job_id=job.pk)


def run_diff(request: HttpRequest) -> HttpResponse:
    """`/diff/?a=<uuid>&b=<uuid>`: two runs side by side, differences first."""
    a_id, b_id = query.run_uuid(request.GET.get("a")), query.run_uuid(request.GET.get("b"))
    context: dict[str, Any] = {
        "a_param": request.GET.get("a", ""),
        "b_param": request.GET.get("b", ""),
    }
    if a_id and b_id:
        a, b = selectors.run_get(run_uuid=a_id), selectors.run_get(run_uuid=b_id)
        if a is None or b is None:
            raise Http404("No such run")
        context.update(a=a, b=b, sections=run_diff_sections(a, b))
    elif request.GET.get("a") or request.GET.get("b"):
        context["problem"] = "Give two run UUIDs."
    return render(request, "dashboard/diff.html", context)
