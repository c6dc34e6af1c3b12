"""Writes for builds."""

from benchhub.builds.models import Build
from benchhub.builds.versions import version_parse


def build_get_or_create(
    *, version: str, commit: str = "", configure_flags: str = "", origin: str = Build.Origin.UNKNOWN
) -> Build:
    """The build with this identity, created if new. Raises VersionError for an unknown name."""
    parsed = version_parse(version)
    commit = commit or parsed.commit
    build, _ = Build.objects.get_or_create(
        version=parsed.name,
        commit=commit,
        configure_flags=configure_flags,
        origin=origin,
        defaults={
            "major": parsed.major,
            "minor": parsed.minor,
            "stage": parsed.stage,
            "stage_number": parsed.stage_number,
            "snapshot_date": parsed.snapshot_date,
            "sort_key": parsed.sort_key,
        },
    )
    return build
