"""Schedule pages: every recurring job with its next run and latest jobs, pause and resume,
and the form that edits one. The rules are the schedule API's (jobs.services): only a
schedule's creator or staff change it, and saving or resuming takes the right to run jobs on
its host."""

import json
from typing import Any

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from benchhub.api.errors import flatten_errors
from benchhub.dashboard.forms import ScheduleForm
from benchhub.dashboard.views_jobs import compare_runs
from benchhub.errors import ApplicationError
from benchhub.jobs import selectors, services
from benchhub.jobs.selectors import ScheduleRow
from benchhub.jobs.serializers import ScheduleInSerializer


def _may_change(request: HttpRequest, row: ScheduleRow) -> bool:
    user = request.user
    return bool(
        user.is_authenticated and services.schedule_may_change(schedule=row.schedule, person=user)
    )


def _entry(request: HttpRequest, row: ScheduleRow) -> dict[str, Any]:
    return {
        "row": row,
        "jobs": [{"job": job, "compare_runs": compare_runs(job)} for job in row.jobs],
        "may_change": _may_change(request, row),
    }


def schedule_list(request: HttpRequest) -> HttpResponse:
    rows = selectors.schedule_list(now=timezone.now())
    context = {"schedules": [_entry(request, row) for row in rows]}
    return render(request, "dashboard/schedules.html", context)


def _row(schedule_id: int) -> ScheduleRow:
    row = selectors.schedule_get(schedule_id=schedule_id, now=timezone.now())
    if row is None:
        raise Http404(f"No schedule {schedule_id}")
    return row


@login_required
def schedule_enable(request: HttpRequest, schedule_id: int) -> HttpResponse:
    """POST `enabled` = 1 (resume) or 0 (pause); a refusal is a message on the list."""
    if request.method == "POST":
        row = _row(schedule_id)
        enabled = request.POST.get("enabled") == "1"
        try:
            services.schedule_enable(schedule=row.schedule, enabled=enabled, by=request.user)
        except ApplicationError as exc:
            flash.error(request, exc.detail)  # not theirs, or no right on the host any more
        else:
            done = "resumed" if enabled else "paused"
            flash.success(request, f"Schedule {row.schedule.name} {done}.")
    return redirect("schedules")


@login_required
def schedule_edit(request: HttpRequest, schedule_id: int) -> HttpResponse:
    row = _row(schedule_id)
    schedule = row.schedule
    if not _may_change(request, row):
        raise PermissionDenied("Only the schedule's creator or staff change it.")
    initial = {"crontab": schedule.crontab, "template": json.dumps(schedule.template, indent=2)}
    form = ScheduleForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid() and _save(request, form, row):
        flash.success(request, f"Schedule {schedule.name} saved.")
        return redirect("schedules")
    return render(request, "dashboard/schedule_edit.html", {"form": form, "schedule": schedule})


def _save(request: HttpRequest, form: ScheduleForm, row: ScheduleRow) -> bool:
    """Validate as the API does and save; False with the errors on the form otherwise. The
    schedule stays in its file set and keeps its pause: the page edits crontab and job only."""
    schedule = row.schedule
    body = {**form.cleaned_data, "name": schedule.name, "enabled": schedule.enabled}
    data = ScheduleInSerializer(data=body)
    if not data.is_valid():
        for path, messages in flatten_errors(data.errors).items():
            field = path.split(".")[0]
            form.add_error(
                field if field in form.fields else None, f"{path}: {'; '.join(messages)}"
            )
        return False
    try:
        services.schedule_save(
            name=schedule.name,
            crontab=data.validated_data["crontab"],
            template=form.cleaned_data["template"],
            enabled=schedule.enabled,
            file_set=schedule.file_set,
            created_by=request.user,
        )
    except ApplicationError as exc:
        form.add_error("template" if (exc.field or "").startswith("template") else None, exc.detail)
        return False
    return True
