"""Job pages: the queue, the form to queue a job, one job with its history."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchhub.api.errors import flatten_errors
from benchhub.dashboard.forms import JobForm
from benchhub.jobs import selectors, services
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobInSerializer

QUEUE_PAGE = 100


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
    }
    return render(request, "dashboard/job.html", context)


@login_required
def job_new(request: HttpRequest) -> HttpResponse:
    form = JobForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        request_body = JobInSerializer(data=form.job_request())
        if request_body.is_valid():
            job = services.job_create(created_by=request.user, **request_body.validated_data)
            return redirect("job", job_id=job.pk)
        for path, messages in flatten_errors(request_body.errors).items():
            field = path.split(".")[0].split("[")[0]
            field = {"config_overrides": "settings", "workload": "builtin"}.get(field, field)
            form.add_error(field if field in form.fields else None, "; ".join(messages))
    return render(request, "dashboard/job_new.html", {"form": form})


@login_required
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    if request.method == "POST":
        try:
            services.job_cancel(job_id=job_id, actor=request.user.get_username())
        except services.JobError:
            pass  # already ended: the page shows its state
    return redirect("job", job_id=job_id)
