"""Job pages: the queue, the form to queue a job, one job with its history."""

import re

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchhub.api.errors import flatten_errors
from benchhub.dashboard.forms import JobForm
from benchhub.errors import ApplicationError
from benchhub.jobs import selectors, services
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobInSerializer
from benchhub.workloads.catalog import catalog_expand, entry_list

QUEUE_PAGE = 100


def catalog_defaults() -> dict[str, dict]:
    """Each entry's job defaults and default params, for job_new.js to show as placeholders."""
    defaults = {}
    for entry in entry_list():
        expansion = catalog_expand(entry_id=entry.id)
        defaults[entry.id] = {"job": expansion.job, "params": expansion.workload["params"]}
    return defaults


def job_list(request: HttpRequest) -> HttpResponse:
    jobs = selectors.job_list().order_by("-created_at", "-id")[:QUEUE_PAGE]
    return render(request, "dashboard/jobs.html", {"jobs": jobs})


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    """One job as it stands; job.js then follows it through the API until it ends."""
    job = selectors.job_get(job_id=job_id)
    if job is None:
        raise Http404(f"No job {job_id}")
    progress = job.progress if isinstance(job.progress, dict) else {}
    step, steps = _number(progress.get("step")), _number(progress.get("steps"))
    context = {
        "job": job,
        "final": job.state in Job.FINAL,
        "progress": progress,
        "step": step if steps else None,
        "steps": steps,
        "compare_runs": compare_runs(job),
    }
    return render(request, "dashboard/job.html", context)


def compare_runs(job: Job) -> str:
    """The job's runs of its latest attempt for ?runs=, in the order the job names the versions
    (an A/A job's two series in upload order); empty unless every version has its run."""
    runs = sorted((r for r in job.runs.all() if r.job_attempt == job.attempt), key=lambda r: r.id)
    if len(runs) != len(job.versions) or len(runs) < 2:
        return ""
    if not job.aa:
        order = {v: i for i, v in enumerate(job.versions)}
        runs.sort(key=lambda r: order.get(r.build.version, len(order)))
    return ",".join(str(r.uuid) for r in runs)


# A custom script's error path: workload.scripts[1].body -> the form's script_1_body.
SCRIPT_PATH = re.compile(r"^workload\.scripts(?:\[(\d+)\](?:\.(name|weight|body))?)?")


def _form_field(path: str, *, catalog: bool) -> str:
    """The form field an API error path belongs to (workload.params.rows -> params,
    workload.scripts[1].body -> script_1_body, workload.setup[0] -> setup)."""
    if path.startswith("workload.params"):
        return "params"
    if script := SCRIPT_PATH.match(path):
        row, part = script.group(1) or "0", script.group(2)
        return f"script_{row}_{part or ('body' if script.group(1) else 'weight')}"
    if path.startswith("workload.setup"):
        return "setup"
    if path == "workload.name":
        return "workload_name"
    field = path.split(".")[0].split("[")[0]
    if field == "workload":
        return "catalog" if catalog else "builtin"
    return {"config_overrides": "settings"}.get(field, field)


def _form_message(path: str, field: str, message: str) -> str:
    """The message as the form shows it: where the field holds several values (params,
    scripts, setup steps), the API's path to the one at fault first (scripts[1].body: ...)."""
    if field == "params" or field == "setup" or field.startswith("script_"):
        return f"{path.removeprefix('workload.')}: {message}"
    return message


@login_required
def job_new(request: HttpRequest) -> HttpResponse:
    initial = {"catalog": request.GET.get("catalog", "")}
    form = JobForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        request_body = JobInSerializer(data=form.job_request())
        if request_body.is_valid():
            try:
                job = services.job_create(created_by=request.user, **request_body.validated_data)
            except ApplicationError as exc:
                field = _form_field(exc.field or "", catalog=bool(form.cleaned_data["catalog"]))
                form.add_error(field if field in form.fields else None, exc.detail)
            else:
                return redirect("job", job_id=job.pk)
        catalog = bool(form.cleaned_data["catalog"])
        for path, messages in flatten_errors(request_body.errors).items():
            field = _form_field(path, catalog=catalog)
            message = _form_message(path, field, "; ".join(messages))
            form.add_error(field if field in form.fields else None, message)
    context = {"form": form, "catalog_defaults": catalog_defaults()}
    return render(request, "dashboard/job_new.html", context)


@login_required
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    if request.method == "POST":
        try:
            services.job_cancel(job_id=job_id, actor=request.user.get_username(), by=request.user)
        except ApplicationError as exc:
            flash.error(request, exc.detail)  # already ended, or not theirs to cancel
    return redirect("job", job_id=job_id)
