"""The workload catalog page: every entry, its params at both sizes and the SQL it generates."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchhub.workloads.catalog import EXPERIMENTS, entry_describe, entry_list


def workload_catalog(request: HttpRequest) -> HttpResponse:
    described = [entry_describe(entry=entry) for entry in entry_list()]
    groups = [
        (experiment, [e for e in described if e["experiment"] == experiment])
        for experiment in EXPERIMENTS
    ]
    return render(request, "dashboard/workloads.html", {"groups": groups})
