"""The Experiments pages: an index of the five published experiments with what has been run of
them, and one page per experiment stacking every workload of it on a host for the chosen
versions, in the presentation its authors used."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from benchhub.compare.experiments import BY_ID, EXPERIMENTS
from benchhub.compare.selectors import (
    ExperimentResults,
    experiment_get,
    experiment_index,
    experiment_newest_host,
)
from benchhub.compare.tables import series_captions
from benchhub.dashboard import query
from benchhub.dashboard.presentation import presentation_context
from benchhub.errors import ApplicationError
from benchhub.jobs.selectors import job_ended_among, job_pending_list


def experiment_list(request: HttpRequest) -> HttpResponse:
    """GET /experiments/[?shown=3,5]: each experiment, its description, the hosts and versions
    run, and the jobs queued or running for it. experiments.js fetches the page every few
    seconds naming the jobs it has shown (`shown`): those that have ended since stay listed,
    saying how."""
    index = experiment_index()
    entries = tuple(entry for e in EXPERIMENTS for entry in e.catalog_entries)
    pending = job_pending_list(catalog_entries=entries)
    ended = job_ended_among(job_ids=query.ids(request.GET, "shown"), catalog_entries=entries)
    rows = [
        {
            "experiment": e,
            "ran": [
                {
                    "host": ran.host,
                    "versions": ran.versions,
                    "workloads": ran.workloads,
                    "query": _query(host=ran.host, versions=ran.versions),
                }
                for ran in index[e.id]
            ],
            "pending": _of(pending, e.catalog_entries),
            "ended": _of(ended, e.catalog_entries),
        }
        for e in EXPERIMENTS
    ]
    return render(request, "dashboard/experiments.html", {"rows": rows})


def _of(jobs: list, catalog_entries: tuple[str, ...]) -> list:
    return [j for j in jobs if j.workload.get("catalog_entry") in catalog_entries]


def experiment_detail(request: HttpRequest, experiment_id: str) -> HttpResponse:
    """GET /experiments/<id>/?host=&versions=a,b[&invalid=1][&level=n]: every workload of the
    experiment on the host, versions in the order given (the first is the baseline). A form
    submission with repeated `versions` is redirected to the permalink's comma form. Without a
    host, the host with the newest runs of the experiment; without versions, every version
    that host ran of it (in version order)."""
    experiment = BY_ID.get(experiment_id)
    if experiment is None:
        raise Http404("No such experiment.")
    versions = query.versions(request.GET)
    host = (request.GET.get("host") or "").strip()
    invalid = query.flag(request.GET.get("invalid"))
    if len(request.GET.getlist("versions")) > 1:
        permalink = _query(host=host, versions=versions, invalid=invalid)
        return redirect(f"{reverse('experiment', args=[experiment.id])}?{permalink}")
    ran = {r.host: r for r in experiment_index()[experiment.id]}
    chosen_for_you = ""
    if not host and not versions:
        # Nothing chosen: show what ran last rather than an empty page.
        host = experiment_newest_host(experiment=experiment.id) or ""
        chosen_for_you = host
    if host in ran and not versions:
        versions = list(ran[host].versions)
    context: dict[str, Any] = {
        "experiment": experiment,
        "errors": {},
        "results": None,
        "chosen_for_you": chosen_for_you,
        "form": _form(ran=ran, host=host, versions=versions, invalid=invalid),
        "pending": job_pending_list(catalog_entries=experiment.catalog_entries),
        "ended": [],
        "has_results": False,
    }
    if host or versions:
        try:
            results = experiment_get(
                experiment=experiment.id, host=host, versions=versions, include_invalid=invalid
            )
        except ApplicationError as exc:
            context["errors"] = exc.fields
        else:
            context.update(
                _results_context(results, level=query.level(request.GET), invalid=invalid)
            )
    return render(request, "dashboard/experiment.html", context)


def experiment_jobs(request: HttpRequest, experiment_id: str) -> HttpResponse:
    """GET /experiments/<id>/jobs/?shown=3,5[&results=1]: the experiment page's box of jobs
    alone, which experiment.js fetches every few seconds: the jobs queued or running for the
    experiment (state, host, stage, progress, expected end), and those of `shown` (the jobs the
    page listed) that have ended since, saying how. `results=1`: the page shows runs already."""
    experiment = BY_ID.get(experiment_id)
    if experiment is None:
        raise Http404("No such experiment.")
    context = {
        "pending": job_pending_list(catalog_entries=experiment.catalog_entries),
        "ended": job_ended_among(
            job_ids=query.ids(request.GET, "shown"), catalog_entries=experiment.catalog_entries
        ),
        "has_results": query.flag(request.GET.get("results")),
    }
    return render(request, "dashboard/_experiment_jobs.html", context)


def _results_context(results: ExperimentResults, *, level: int | None, invalid: bool) -> dict:
    comparisons = [c for c in results.comparisons if c.series]
    several = len(comparisons) > 1
    labelled = [
        (f"{c.series[0].run.workload.name} · {s.label}" if several else s.label, s.run)
        for c in comparisons
        for s in c.series
    ]
    versions = ",".join(results.versions)
    return {
        "results": results,
        "has_results": bool(comparisons),
        "captions": series_captions(labelled),
        "permalink": _query(host=results.host.name, versions=results.versions, invalid=invalid),
        "workloads": [
            {
                "name": c.series[0].run.workload.name,
                "compare_query": urlencode(
                    {
                        "workload": c.series[0].run.workload.name,
                        "host": results.host.name,
                        "versions": versions,
                    },
                    safe=",",
                ),
            }
            for c in comparisons
        ],
        **presentation_context(comparisons, level=level, sweep_charts=True),
    }


def _form(*, ran: dict, host: str, versions: list[str], invalid: bool) -> dict[str, Any]:
    known = ran[host].versions if host in ran else []
    return {
        "host": host,
        "hosts": list(ran),
        "version_choices": [(v, v in versions) for v in dict.fromkeys(known + versions)],
        "invalid": invalid,
    }


def _query(*, host: str, versions: list[str], invalid: bool = False) -> str:
    params = {"host": host, "versions": ",".join(versions)}
    if invalid:
        params["invalid"] = "1"
    return urlencode(params, safe=",")
