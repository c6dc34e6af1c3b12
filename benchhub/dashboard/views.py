"""Page views."""

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from benchhub.hosts.selectors import host_set_aside_list
from benchhub.jobs.selectors import queue_status
from benchhub.results.selectors import run_dimensions, run_list

HOME_RUNS = 25


def home(request: HttpRequest) -> HttpResponse:
    """Recent runs, the queue and the agents (home.js keeps those two live), quick compare."""
    runs = run_list(filters={}).order_by("-created_at", "-id")[:HOME_RUNS]
    status = queue_status()
    dimensions = run_dimensions()
    context = {
        "runs": runs,
        "status": status,
        "dimensions": dimensions,
        "measured": [list(triple) for triple in dimensions.measured],
        "set_aside": host_set_aside_list(),
    }
    return render(request, "dashboard/home.html", context)


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and `make up`: answers once the database does."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
