"""Filters for live pages; home.js formats the same way, so a poll changes no wording."""

from datetime import UTC

from django import template
from django.utils import timezone

from benchhub.jobs.models import Job
from benchhub.jobs.selectors import job_expected_end

register = template.Library()


@register.filter
def seconds_ago(seconds: float | None) -> str:
    """12.3 -> "12 s ago", 150 -> "2 min ago", 7300 -> "2 h ago", None -> "never"."""
    if seconds is None:
        return "never"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min ago"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} d ago"


@register.filter
def expected_end(job: Job) -> str:
    """ "expected to end about 22:41 UTC" (with the date when not today) for a running job whose
    pace is known (jobs.selectors.job_expected_end); "" otherwise."""
    now = timezone.now()
    end = job_expected_end(job=job, now=now)
    if end is None:
        return ""
    end = end.astimezone(UTC)
    shown = (
        end.strftime("%H:%M")
        if end.date() == now.astimezone(UTC).date()
        else (end.strftime("%Y-%m-%d %H:%M"))
    )
    return f"expected to end about {shown} UTC"


@register.filter
def ended_word(state: str) -> str:
    """How a job ended, as its page says it: "done" reads "finished"; failed, cancelled and
    expired read as themselves."""
    return "finished" if state == Job.State.DONE else str(state)
