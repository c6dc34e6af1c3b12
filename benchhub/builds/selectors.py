"""Reads for builds."""

from django.db.models import QuerySet

from benchhub.builds.models import Build

MAX_BUILDS = 1000


def build_list() -> QuerySet[Build]:
    """Builds in version order (see builds.versions), oldest first; bounded."""
    return Build.objects.order_by("sort_key", "commit", "origin")[:MAX_BUILDS]
