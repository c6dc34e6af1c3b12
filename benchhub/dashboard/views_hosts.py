"""The host pages: every host with its agent (or none: imported), last heartbeat and runs; one
host's hardware, its tuning and lscpu, and its run-to-run noise per workload and client
level."""

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from benchhub.compare.selectors import HOST_NOISE_REPEATS, host_noise_rows
from benchhub.hosts.models import Host, host_name_key
from benchhub.hosts.selectors import host_overview_list
from benchhub.hosts.tuning import host_tuning

HOSTS_PAGE = 50


def host_list(request: HttpRequest) -> HttpResponse:
    """GET /hosts/[?name=&measured_by=agent|imported][&page=n]: the hosts by name, 50 a page,
    whether an agent measures each or its runs were imported, when its agent last called in,
    its runs and tags."""
    name = (request.GET.get("name") or "").strip()[:100]
    measured_by = request.GET.get("measured_by") or ""
    if measured_by not in ("agent", "imported"):
        measured_by = ""
    hosts = host_overview_list(name_contains=name, measured_by=measured_by)
    page = Paginator(hosts, HOSTS_PAGE).get_page(request.GET.get("page"))
    filters = {k: v for k, v in (("name", name), ("measured_by", measured_by)) if v}
    context = {"page": page, "filters": filters, "filter_query": urlencode(filters)}
    return render(request, "dashboard/hosts.html", context)


def host_detail(request: HttpRequest, name: str) -> HttpResponse:
    """GET /hosts/<name>/: what differences this host can tell apart, per workload and level."""
    host = Host.objects.select_related("current_facts").filter(name_key=host_name_key(name)).first()
    if host is None:
        raise Http404(f"No host {name}")
    context = {
        "host": host,
        "tuning": host_tuning(host.current_facts),
        "noise": host_noise_rows(host=host),
        "repeats": HOST_NOISE_REPEATS,
    }
    return render(request, "dashboard/host.html", context)
