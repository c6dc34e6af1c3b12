"""The Compare and History pages. Compare parses its query, reads everything the comparison
shows in one call (compare.selectors.comparison_show: the runs, verdicts, rows, presentation and
why section, the same read as the compare API) and draws its figures (dashboard.charts, and the
presentation's and the why section's); History reads one series and the regressions marked on
it."""

from urllib.parse import parse_qsl, urlencode

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchhub.api.errors import flatten_errors
from benchhub.bisections.origins import bisectable
from benchhub.compare.selectors import (
    ComparisonShown,
    compare_choices,
    comparison_get,
    comparison_show,
    history_get,
    versions_grouped,
)
from benchhub.compare.serializers import CompareQuerySerializer, permalink_query, query_params
from benchhub.compare.services import comparison_settle
from benchhub.compare.tables import history_differences, history_rows, measured_on
from benchhub.dashboard import charts, query
from benchhub.dashboard.views_compare_sections import (
    compare_history_url,
    section_query,
    section_url,
    sections_links,
)
from benchhub.errors import ApplicationError
from benchhub.jobs.selectors import job_ended_among, job_pending_for
from benchhub.regressions.selectors import history_markers
from benchhub.stats.noise import MAX_REPEATS


def _selection_title(comparison, workload: str | None, host: str | None) -> str:
    versions = " vs ".join(s.label for s in comparison.series)
    where = f" on {host}" if host else ""
    return f"{workload or comparison.series[0].run.workload.name}{where}: {versions}"


def compare(request: HttpRequest) -> HttpResponse:
    """GET /compare/?workload=&host=&versions=a,b[&baseline=a][&threshold=2][&same_hardware=1]
    [&invalid=1][&unlike=1][&why=<clients>] or ?runs=u1,u2. A form submission with repeated
    `versions` is redirected to the permalink's comma form. The page shows the verdicts and
    the tps and latency charts; its other sections are folded and load from their own URLs
    (views_compare_sections), with the page's query (`why` picks the why section's level)."""
    if len(request.GET.getlist("versions")) > 1:
        selection = CompareQuerySerializer(data=query_params(request.GET))
        if selection.is_valid():
            return redirect(f"{reverse('compare')}?{permalink_query(selection.validated_data)}")
    params = query_params(request.GET)
    context: dict = {"params": params, "errors": {}, "comparison": None}
    if params:
        selection = CompareQuerySerializer(data=params)
        if selection.is_valid():
            try:
                # The folded sections are read when opened (views_compare_sections).
                shown = comparison_show(
                    selection=selection.selection(),
                    threshold=selection.threshold_fraction,
                    sections=False,
                )
            except ApplicationError as exc:
                context["errors"] = exc.fields
            else:
                context.update(_comparison_context(shown, selection.validated_data))
                own = section_query(
                    request.GET, permalink=permalink_query(selection.validated_data)
                )
                context["sections"] = sections_links(own)
                context["method_url"] = section_url("method", own)
                context["pending"] = _pending(shown, selection.validated_data)
                context["pending_url"] = (
                    f"{reverse('compare-pending')}?{permalink_query(selection.validated_data)}"
                )
        else:
            context["errors"] = flatten_errors(selection.errors)
    _form_context(context, params, versions=query.versions(request.GET))
    return render(request, "dashboard/compare.html", context)


def _pending(shown: ComparisonShown, data: dict) -> list:
    """The jobs that will measure the versions without a run yet: the page says they are coming
    rather than that nothing was found."""
    missing = shown.comparison.missing
    if not missing or not data.get("workload"):
        return []
    return job_pending_for(workload=data["workload"], host=data.get("host"), versions=missing)


def compare_pending(request: HttpRequest) -> HttpResponse:
    """GET /compare/pending/?<the compare page's query>&shown=3,5: the compare page's box of
    the jobs that will measure its missing versions, alone, which compare.js fetches every few
    seconds while the page waits for runs: each job queued or running (state, host, stage,
    progress, expected end) and those of `shown` (the jobs the page listed) that have ended
    since, saying how. When no version is missing any more, the box says the runs have arrived
    (`data-arrived`) and the page reloads to show the comparison."""
    selection = CompareQuerySerializer(data=query_params(request.GET))
    if not selection.is_valid():
        return HttpResponse(status=400)
    try:
        comparison = comparison_get(**selection.selection())
    except ApplicationError:
        return HttpResponse(status=400)
    data = selection.validated_data
    workload = data.get("workload")
    missing = comparison.missing
    context = {
        "missing": missing,
        "pending": (
            job_pending_for(workload=workload, host=data.get("host"), versions=missing)
            if missing and workload
            else []
        ),
        "ended": job_ended_among(job_ids=query.ids(request.GET, "shown"), workload=workload)
        if workload
        else [],
    }
    return render(request, "dashboard/_compare_pending.html", context)


def _comparison_context(shown: ComparisonShown, data: dict) -> dict:
    comparison, assessment = shown.comparison, shown.assessment
    if not comparison.series:
        return {"comparison": comparison}
    title = _selection_title(comparison, data.get("workload"), data.get("host"))
    permalink = permalink_query(data)
    return {
        "comparison": comparison,
        "assessment": assessment,
        "threshold_pct": f"{assessment.threshold * 100:g}",
        "title": title,
        "captions": shown.captions,
        "unlike_notes": shown.unlike_notes,
        "verdict_lines": shown.verdict_lines,
        "max_repeats": MAX_REPEATS,
        "tps_figure": charts.tps_figure(comparison, title=f"tps: {title}"),
        "latency_figure": charts.latency_figure(comparison, title=f"latency: {title}"),
        "permalink": permalink,
        "permalink_with_threshold": permalink,
        "threshold_hidden": [(k, v) for k, v in parse_qsl(permalink) if k != "threshold"],
        "api_url": f"{reverse('api-compare')}?{permalink}",
        "history_url": compare_history_url(comparison, data),
        "bisect_url": _bisect_url(comparison),
    }


def _bisect_url(comparison) -> str:
    """ "Find the commit": the bisection form started from the first two runs compared, when
    they are builds of two commits of one git repository (their provenance says so)."""
    if len(comparison.series) < 2:
        return ""
    good, bad = (s.run for s in comparison.series[:2])
    if not bisectable(good, bad):
        return ""
    query = {"good_run": str(good.uuid), "bad_run": str(bad.uuid)}
    return f"{reverse('bisection-new')}?{urlencode(query)}"


def _form_context(context: dict, params: dict, *, versions: list[str]) -> None:
    comparison = context.get("comparison")
    selected_versions = versions
    workload, host = params.get("workload"), params.get("host")
    if comparison and comparison.series and not workload:
        workload = comparison.series[0].run.workload.name
        host = comparison.series[0].run.host.name
    choices = compare_choices(workload=workload, host=host)
    context["form"] = {
        "workload": workload or "",
        "host": host or "",
        "versions": selected_versions,
        "runs": params.get("runs") or "",
        "tag": params.get("tag") or "",
        "same_hardware": query.flag(params.get("same_hardware")),
        "invalid": query.flag(params.get("invalid")),
        "unlike": query.flag(params.get("unlike")),
        "workloads": choices.workloads,
        "hosts": choices.hosts,
        "version_groups": versions_grouped(versions=choices.versions, selected=selected_versions),
    }


@login_required
@require_POST
def compare_settle(request: HttpRequest) -> HttpResponse:
    """POST /compare/settle/?<the comparison's query>: "settle it", more runs or repeats of its
    inconclusive levels (compare.services.comparison_settle); on to the first queued job's
    page."""
    selection = CompareQuerySerializer(data=query_params(request.GET))
    back = f"{reverse('compare')}?{request.GET.urlencode()}"
    if not selection.is_valid():
        flash.error(request, "This comparison cannot be settled: its selection is not valid.")
        return redirect(back)
    try:
        jobs = comparison_settle(
            comparison=comparison_get(**selection.selection()),
            threshold=selection.threshold_fraction,
            created_by=request.user,
            permalink=permalink_query(selection.validated_data),
        )
    except ApplicationError as exc:
        flash.error(request, exc.detail)
        return redirect(back)
    if len(jobs) > 1:
        flash.info(
            request,
            f"Queued {len(jobs)} separate jobs ({', '.join(str(job.pk) for job in jobs)}): with "
            "one run a side, only runs of separate jobs show the variation between runs.",
        )
    return redirect("job", job_id=jobs[0].pk)


def history(request: HttpRequest) -> HttpResponse:
    """GET /history/?host=&workload=&clients=n[&key=<comparability key prefix>]
    [&config=<configuration hash prefix>][&invalid=1][&tag=a,b: only runs carrying every one
    of these review tags]."""
    context: dict = {
        "params": request.GET,
        "errors": {},
        "history": None,
        "tag_param": ",".join(request.GET.getlist("tag")),
    }
    try:
        host = query.required(request.GET, "host")
        workload = query.required(request.GET, "workload")
        clients = query.clients(request.GET)
        tags = query.tags(request.GET)
        result = history_get(
            host=host,
            workload=workload,
            clients=clients,
            config=request.GET.get("config") or None,
            key=request.GET.get("key") or None,
            include_invalid=query.flag(request.GET.get("invalid")),
            tags=tags,
        )
    except ApplicationError as exc:
        if request.GET:
            context["errors"] = exc.fields
        return render(
            request, "dashboard/history.html", context, status=400 if request.GET else 200
        )
    title = f"{workload} on {host}, {clients} clients"
    changes = history_markers(
        host_id=result.host.pk,
        workload=workload,
        clients=clients,
        config_hash=result.config_hash,
    )
    context.update(
        history=result,
        rows=history_rows(result),
        differences=history_differences(result),
        title=title,
        changes=changes,
        figure=charts.history_figure(result, title=f"tps over time: {title}", changes=changes),
        caption=_history_caption(result),
    )
    return render(request, "dashboard/history.html", context)


def _history_caption(result) -> str:
    if result.latest is None:
        return ""
    return f"Latest run measured on {measured_on(result.latest)}."
