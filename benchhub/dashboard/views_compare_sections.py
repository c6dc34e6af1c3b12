"""The Compare page's folded sections, each at a URL of its own: /compare/<section>/?<the
page's query>. The page shows the verdicts and the two charts; evidence, the why section, the
flame graphs, the top statements and the method are fetched from here when a reader opens one
(compare.js asks for `fragment=1`, the section's HTML alone). Without `fragment`, the section
is a page of its own (the link a browser without scripts follows). Each section reads the
comparison through the same selector as the page (compare.selectors.comparison_show)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse

from benchhub.api.errors import flatten_errors
from benchhub.compare.knees import knee_text
from benchhub.compare.selectors import ComparisonShown, comparison_show
from benchhub.compare.serializers import CompareQuerySerializer, permalink_query, query_params
from benchhub.dashboard import charts, query
from benchhub.dashboard.evidence import why_context
from benchhub.dashboard.presentation import presentation_section
from benchhub.errors import ApplicationError
from benchhub.results.profiles import UNSYMBOLIZED_LIMIT, unsymbolized_share
from benchhub.stats.noise import MAX_REPEATS


@dataclass(frozen=True)
class Section:
    """A folded section: its element id (also its URL's and its permalink's name), its title,
    and the ids inside it that a permalink may name (#summary opens the evidence)."""

    id: str
    title: str
    anchors: tuple[str, ...] = ()


SECTIONS = (
    Section(
        "evidence",
        "Evidence: the numbers per client level, latency percentiles, the knee of each curve",
        ("summary", "compare-table", "percentiles", "knees", "run-sets"),
    ),
    Section("why", "Why it differs: server statistics, wait events and latency at one level"),
    Section("flames", "Flame graphs: where the server spent its CPU"),
    Section("statements", "Top statements: the server's costliest statements"),
    Section(
        "method",
        "The method: how the verdicts were computed",
        ("how-computed", "method-rank", "method-settle", "method-visible"),
    ),
)
BY_ID = {section.id: section for section in SECTIONS}


# What the page's query says beyond its permalink, for its sections: the why section's level
# and a connections presentation's level.
SECTION_PARAMS = ("why", "level")


def section_query(query: QueryDict, *, permalink: str) -> str:
    """The query of the page's sections: its permalink's, with `why` and `level` if asked."""
    extra = {name: query[name] for name in SECTION_PARAMS if query.get(name)}
    return f"{permalink}&{urlencode(extra)}" if extra else permalink


def section_url(section: str, query_string: str) -> str:
    """The URL of one folded section of the comparison whose page's query is `query_string`."""
    return f"{reverse('compare-section', args=[section])}?{query_string}"


def sections_links(query_string: str) -> list[dict[str, str]]:
    """The page's folded sections with the URL each loads from: {"id", "title", "anchors",
    "url"}; `query_string` is the page's own (its selection, threshold and why level)."""
    return [
        {
            "id": s.id,
            "title": s.title,
            "anchors": " ".join(s.anchors),
            "url": section_url(s.id, query_string),
        }
        for s in SECTIONS
    ]


def compare_history_url(comparison: Any, data: dict) -> str:
    """History of the compared host and workload, without its level: each level's row adds
    `&clients=n`. The comparison's tags carry over, so the series holds the same runs."""
    base = comparison.series[0].run
    params = {"host": data.get("host") or base.host.name, "workload": base.workload.name}
    if data.get("tag"):
        params["tag"] = ",".join(data["tag"])
    return f"{reverse('history')}?{urlencode(params)}"


def _evidence(shown: ComparisonShown, data: dict, title: str) -> dict[str, Any]:
    comparison = shown.comparison
    percentiles = charts.latency_percentiles_figure(
        comparison, shown.latency, title=f"latency percentiles: {title}"
    )
    presentation = presentation_section(
        [comparison], tables=shown.presentation, progress=shown.progress
    )
    figures = {"percentiles-chart": percentiles} if percentiles else {}
    return {
        **presentation,
        "rows": shown.rows,
        "summary": list(zip(comparison.series, shown.summary, strict=True)),
        "captions": shown.captions,
        "set_lines": shown.set_lines,
        "pooled_hosts": shown.pooled_hosts,
        "has_percentiles": bool(percentiles),
        "knee_lines": [knee_text(k) for k in shown.knees],
        "section_figures": figures,
    }


def _why_part(prefixes: tuple[str, ...], *, keep: bool) -> Callable[..., dict[str, Any]]:
    """The why section's context with only its figures whose id starts (or, with `keep`
    False, does not start) with one of `prefixes`: the flame graphs have a section of their
    own."""

    def context(shown: ComparisonShown, data: dict, title: str) -> dict[str, Any]:
        found = why_context(shown.why, shown.comparison, permalink=permalink_query(data))
        figures = found.get("why_figures", {})
        found["section_figures"] = {
            k: v for k, v in figures.items() if k.startswith(prefixes) == keep
        }
        return found

    return context


def _flames(shown: ComparisonShown, data: dict, title: str) -> dict[str, Any]:
    found = _why_part(("why-flame",), keep=True)(shown, data, title)
    found["flame_notes"] = flame_notes(shown.why.profiled if shown.why else [])
    return found


def flame_notes(sides: list) -> list[dict[str, Any]]:
    """For each profiled side whose profile is mostly frames without symbols: its label, that
    share in %, and its server's major (to name the debug symbols package)."""
    notes = []
    for side in sides:
        share = unsymbolized_share(side.level.profile["folded"])
        if share is not None and share > UNSYMBOLIZED_LIMIT:
            notes.append(
                {
                    "label": side.series.label,
                    "unknown_pct": share * 100,
                    "major": side.series.run.build.major,
                }
            )
    return notes


def _method(shown: ComparisonShown, data: dict, title: str) -> dict[str, Any]:
    return {"max_repeats": MAX_REPEATS}


BUILDERS: dict[str, Callable[[ComparisonShown, dict, str], dict[str, Any]]] = {
    "evidence": _evidence,
    "why": _why_part(("why-flame",), keep=False),
    "flames": _flames,
    "statements": _why_part(("why-flame",), keep=True),
    "method": _method,
}


def compare_section(request: HttpRequest, section: str) -> HttpResponse:
    """GET /compare/<section>/?<the Compare page's query>[&fragment=1]: one folded section of
    the comparison, alone (`fragment`) or as a page. 400 with the fields named when the query
    is not a comparison."""
    if section not in BY_ID:
        raise Http404("No such section of the Compare page.")
    params = query_params(request.GET)
    fragment = query.flag(request.GET.get("fragment"))
    context: dict[str, Any] = {"section": BY_ID[section], "errors": {}, "fragment": fragment}
    selection = CompareQuerySerializer(data=params)
    if not selection.is_valid():
        context["errors"] = flatten_errors(selection.errors)
        return _render(request, context, status=400)
    try:
        shown = comparison_show(
            selection=selection.selection(),
            threshold=selection.threshold_fraction,
            page=section == "evidence",
            level=query.level(request.GET),
            why=selection.why_level,
        )
    except ApplicationError as exc:
        context["errors"] = exc.fields
        return _render(request, context, status=400)
    context.update(_common(request, shown, selection.validated_data))
    if shown.comparison.series:
        context.update(BUILDERS[section](shown, selection.validated_data, context["title"]))
    return _render(request, context)


def _common(request: HttpRequest, shown: ComparisonShown, data: dict) -> dict[str, Any]:
    comparison = shown.comparison
    names = " vs ".join(s.label for s in comparison.series)
    where = f" on {data['host']}" if data.get("host") else ""
    workload = data.get("workload") or (
        comparison.series[0].run.workload.name if comparison.series else ""
    )
    own = section_query(request.GET, permalink=permalink_query(data))
    return {
        "comparison": comparison,
        "assessment": shown.assessment,
        "threshold_pct": f"{shown.assessment.threshold * 100:g}",
        "title": f"{workload}{where}: {names}",
        "page_url": f"{reverse('compare')}?{own}",
        "history_url": compare_history_url(comparison, data) if comparison.series else "",
        "section_figures": {},
    }


def _render(request: HttpRequest, context: dict[str, Any], *, status: int = 200) -> HttpResponse:
    section = context["section"].id
    context["section_template"] = f"dashboard/compare_sections/{section}.html"
    template = (
        "dashboard/compare_sections/fragment.html"
        if context["fragment"]
        else "dashboard/compare_sections/page.html"
    )
    return render(request, template, context, status=status)
