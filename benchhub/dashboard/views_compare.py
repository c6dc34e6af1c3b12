"""The Compare and History pages. Views parse the query, call one selector, build the figures
(dashboard.charts) and render; the numbers come from compare.tables, as in the API."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from benchhub.api.errors import flatten_errors
from benchhub.compare.selectors import (
    ComparisonError,
    compare_choices,
    comparison_get,
    history_get,
)
from benchhub.compare.serializers import CompareQuerySerializer, permalink_query, query_params
from benchhub.compare.tables import (
    captions,
    comparison_rows,
    comparison_summary,
    measured_on,
)
from benchhub.dashboard import charts
from benchhub.dashboard.views_experiments import presentation_context


def _selection_title(comparison, workload: str | None, host: str | None) -> str:
    versions = " vs ".join(s.label for s in comparison.series)
    where = f" on {host}" if host else ""
    return f"{workload or comparison.series[0].run.workload.name}{where}: {versions}"


def compare(request: HttpRequest) -> HttpResponse:
    """GET /compare/?workload=&host=&versions=a,b[&same_hardware=1][&invalid=1] or ?runs=u1,u2.
    A form submission with repeated `versions` is redirected to the permalink's comma form."""
    if len(request.GET.getlist("versions")) > 1:
        query = CompareQuerySerializer(data=query_params(request.GET))
        if query.is_valid():
            return redirect(f"{reverse('compare')}?{permalink_query(query.validated_data)}")
    params = query_params(request.GET)
    context: dict = {"params": params, "errors": {}, "comparison": None}
    if params:
        query = CompareQuerySerializer(data=params)
        if query.is_valid():
            try:
                comparison = comparison_get(**query.selection())
            except ComparisonError as exc:
                context["errors"] = exc.fields
            else:
                context.update(
                    _comparison_context(comparison, query.validated_data, level=_level(request))
                )
        else:
            context["errors"] = flatten_errors(query.errors)
    _form_context(context, params)
    return render(request, "dashboard/compare.html", context)


def _level(request: HttpRequest) -> int | None:
    try:
        return int(request.GET.get("level", ""))
    except ValueError:
        return None


def _comparison_context(comparison, data: dict, *, level: int | None = None) -> dict:
    if not comparison.series:
        return {"comparison": comparison}
    title = _selection_title(comparison, data.get("workload"), data.get("host"))
    permalink = permalink_query(data)
    base = comparison.series[0].run
    history_host = data.get("host") or base.host.name
    return {
        "comparison": comparison,
        "title": title,
        "rows": comparison_rows(comparison),
        "summary": list(zip(comparison.series, comparison_summary(comparison), strict=True)),
        "captions": captions(comparison),
        "tps_figure": charts.tps_figure(comparison, title=f"tps: {title}"),
        "latency_figure": charts.latency_figure(comparison, title=f"latency: {title}"),
        "permalink": permalink,
        "api_url": f"{reverse('api-compare')}?{permalink}",
        "history_query": {"host": history_host, "workload": base.workload.name},
        **presentation_context([comparison], level=level),
    }


def _form_context(context: dict, params: dict) -> None:
    comparison = context.get("comparison")
    selected_versions = [v.strip() for v in (params.get("versions") or "").split(",") if v.strip()]
    workload, host = params.get("workload"), params.get("host")
    if comparison and comparison.series and not workload:
        workload = comparison.series[0].run.workload.name
        host = comparison.series[0].run.host.name
    choices = compare_choices(workload=workload, host=host)
    versions = list(dict.fromkeys(choices.versions + selected_versions))
    context["form"] = {
        "workload": workload or "",
        "host": host or "",
        "versions": selected_versions,
        "runs": params.get("runs") or "",
        "same_hardware": _flag(params.get("same_hardware")),
        "invalid": _flag(params.get("invalid")),
        "workloads": choices.workloads,
        "hosts": choices.hosts,
        "version_choices": [(v, v in selected_versions) for v in versions],
    }


def _flag(value) -> bool:
    return str(value).lower() in ("1", "true", "on", "yes")


def history(request: HttpRequest) -> HttpResponse:
    """GET /history/?host=&workload=&clients=n[&config=<hash prefix>][&invalid=1]."""
    context: dict = {"params": request.GET, "errors": {}, "history": None}
    try:
        host, workload = _required(request, "host"), _required(request, "workload")
        clients = _clients(request)
        result = history_get(
            host=host,
            workload=workload,
            clients=clients,
            config=request.GET.get("config") or None,
            include_invalid=_flag(request.GET.get("invalid")),
        )
    except ComparisonError as exc:
        if request.GET:
            context["errors"] = exc.fields
        return render(
            request, "dashboard/history.html", context, status=400 if request.GET else 200
        )
    title = f"{workload} on {host}, {clients} clients"
    context.update(
        history=result,
        title=title,
        figure=charts.history_figure(result, title=f"tps over time: {title}"),
        caption=_history_caption(result),
    )
    return render(request, "dashboard/history.html", context)


def _required(request: HttpRequest, name: str) -> str:
    value = (request.GET.get(name) or "").strip()
    if not value:
        raise ComparisonError("invalid", f"{name} is required.", field=name)
    return value


def _clients(request: HttpRequest) -> int:
    try:
        clients = int(request.GET.get("clients", ""))
    except ValueError:
        raise ComparisonError(
            "invalid", "clients must be a whole number of clients.", field="clients"
        ) from None
    if clients < 1:
        raise ComparisonError("invalid", "clients must be at least 1.", field="clients")
    return clients


def _history_caption(result) -> str:
    if result.latest is None:
        return ""
    return f"Latest run measured on {measured_on(result.latest)}."
