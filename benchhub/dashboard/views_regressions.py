"""Regression pages: the triage list, one change with its log and state form, and a person's
subscriptions, webhooks and delivery log.

Every write is a POST from a signed-in person (CSRF-checked by the middleware), calls one
service, and redirects back; a refused request comes back as a message on the page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from benchhub.bisections.origins import bisectable
from benchhub.dashboard.query import SignedInRequest
from benchhub.errors import ApplicationError
from benchhub.regressions import selectors, services
from benchhub.regressions.models import AlertGroup, Regression
from benchhub.regressions.presentation import group_rows, list_rows

LIST_LIMIT = 200
FILTERS = ("state", "kind", "host", "workload", "group")


def regression_list(request: HttpRequest) -> HttpResponse:
    """GET /regressions/?state=&kind=&host=&workload=&group=: detected changes, newest first
    (`group`: the changes of one alert, its host and commit range)."""
    filters = {name: request.GET.get(name, "").strip() for name in FILTERS}
    errors = {}
    if filters["state"] and filters["state"] not in Regression.State.values:
        errors["state"] = [f"One of {', '.join(Regression.State.values)}."]
        filters["state"] = ""
    if filters["kind"] and filters["kind"] not in Regression.Kind.values:
        errors["kind"] = [f"One of {', '.join(Regression.Kind.values)}."]
        filters["kind"] = ""
    if filters["group"] and not filters["group"].isdigit():
        errors["group"] = ["An alert group's id (a number)."]
        filters["group"] = ""
    regressions = selectors.regression_rows(filters=filters, limit=LIST_LIMIT)
    context = {
        "rows": list_rows(regressions),
        "filters": filters,
        "errors": errors,
        "states": Regression.State.choices,
        "kinds": Regression.Kind.choices,
        "limit": LIST_LIMIT,
    }
    return render(request, "regressions/list.html", context, status=400 if errors else 200)


def group_list(request: HttpRequest) -> HttpResponse:
    """GET /regressions/groups/?host=&direction=: one row per alert (a host and commit range,
    its changes across levels and workloads), the most recently changed first, as Perfherder
    lists alert summaries; each links to its changes."""
    filters = {name: request.GET.get(name, "").strip() for name in ("host", "direction")}
    errors = {}
    if filters["direction"] and filters["direction"] not in AlertGroup.Direction.values:
        errors["direction"] = [f"One of {', '.join(AlertGroup.Direction.values)}."]
        filters["direction"] = ""
    groups = list(selectors.group_list(filters=filters)[:LIST_LIMIT])
    context = {
        "rows": group_rows(groups),
        "filters": filters,
        "errors": errors,
        "directions": AlertGroup.Direction.choices,
        "limit": LIST_LIMIT,
    }
    return render(request, "regressions/groups.html", context, status=400 if errors else 200)


def _regression(regression_id: int) -> Regression:
    regression = selectors.regression_get(regression_id=regression_id)
    if regression is None:
        raise Http404(f"No regression {regression_id}")
    return regression


def regression_detail(request: HttpRequest, regression_id: int) -> HttpResponse:
    regression = _regression(regression_id)
    context = {
        "regression": regression,
        "events": selectors.regression_events(regression=regression),
        "states": Regression.State.choices,
        "can_triage": services.can_triage(request.user),
        "bisectable": bisectable(regression.run_before, regression.run_after),
    }
    return render(request, "regressions/detail.html", context)


@login_required
@require_POST
def regression_state(request: SignedInRequest, regression_id: int) -> HttpResponse:
    regression = _regression(regression_id)
    try:
        services.regression_state_change(
            regression=regression,
            state=request.POST.get("state", ""),
            note=request.POST.get("note", ""),
            actor=request.user,
        )
    except ApplicationError as exc:
        messages.error(request, f"State not changed: {exc.detail}")
    else:
        messages.success(request, f"Marked {regression.get_state_display()}.")
    return redirect("regression", regression_id=regression.pk)


@login_required
def subscriptions(request: HttpRequest) -> HttpResponse:
    """GET /regressions/subscriptions/: what I am told about, where, and what was sent."""
    context = {
        "subscriptions": selectors.subscription_list(user=request.user),
        "webhooks": selectors.webhook_list(user=request.user),
        "deliveries": selectors.delivery_list(user=request.user),
    }
    return render(request, "regressions/subscriptions.html", context)


@login_required
@require_POST
def subscription_add(request: HttpRequest) -> HttpResponse:
    try:
        services.subscription_add(
            user=request.user,
            host_name=request.POST.get("host", "")[:200],
            workload_name=request.POST.get("workload", "")[:200],
        )
    except ApplicationError as exc:
        messages.error(request, f"Not subscribed: {exc.detail}")
    return redirect("subscriptions")


@login_required
@require_POST
def subscription_remove(request: HttpRequest, subscription_id: int) -> HttpResponse:
    services.subscription_remove(user=request.user, subscription_id=subscription_id)
    return redirect("subscriptions")


@login_required
@require_POST
def webhook_add(request: HttpRequest) -> HttpResponse:
    try:
        services.webhook_add(user=request.user, url=request.POST.get("url", "")[:2000])
    except ApplicationError as exc:
        messages.error(request, f"Webhook not added: {exc.detail}")
    return redirect("subscriptions")


@login_required
@require_POST
def webhook_remove(request: HttpRequest, webhook_id: int) -> HttpResponse:
    services.webhook_remove(user=request.user, webhook_id=webhook_id)
    return redirect("subscriptions")
