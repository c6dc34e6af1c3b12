"""Who may run what where: the right to put work on a benchmark host.

Whatever a job carries (setup SQL, scripts, options, settings) runs on the host that claims it,
so queueing a job, a schedule or a rerun is a right on hosts, not a right every signed-in person
has. Staff have it everywhere; a host's owners have it on their host; anyone else has it where a
HostGrant gives it to them or to one of their groups, for the host or for one of its tags. A job
that names no host runs wherever its tags match, so it needs a grant on one of its tags (every
host it can land on has that tag); a job naming neither host nor tags may run anywhere: staff, or
those granted the tag `*` (ALL_HOSTS), which matches every host, only.

The same right lets a person hide data of the host (mark its runs invalid). Checked in the
services (jobs.services, review.services), so the pages, the API and the schedules share it.
"""

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db.models import Q

from benchhub.errors import ApplicationError
from benchhub.hosts.models import Host, HostGrant

ALL_HOSTS = "*"


class HostForbidden(ApplicationError):
    """The person has no right to run jobs (or hide data) on the host named in the detail."""

    status = 403


def _grants_of(person: User) -> Q:
    return Q(user=person) | Q(group__in=person.groups.all())


def host_may_run(*, person: User | None, host: Host) -> bool:
    """True when `person` may put work on `host` (None is the operator or the system)."""
    if person is None or person.is_staff:
        return True
    if host.owners.filter(pk=person.pk).exists():
        return True
    return (
        HostGrant.objects.filter(_grants_of(person))
        .filter(Q(host=host) | Q(tag__in=[*host.tags, ALL_HOSTS]))
        .exists()
    )


def host_tags_may_run(*, person: User | None, tags: Sequence[str]) -> bool:
    """True when `person` may run a job on any host carrying all of `tags`."""
    if person is None or person.is_staff:
        return True
    return HostGrant.objects.filter(_grants_of(person)).filter(tag__in=[*tags, ALL_HOSTS]).exists()


def job_target_check(
    *, person: User | None, host: Host | None, host_tags: Sequence[str], field: str = "host"
) -> None:
    """Raise HostForbidden (403, naming the host or tags) unless `person` may run a job there."""
    if host is not None:
        if not host_may_run(person=person, host=host):
            raise HostForbidden(
                "forbidden_host",
                f"You may not run jobs on host '{host.name}': its owners or staff grant that "
                "right.",
                field=field,
            )
        return
    if host_tags_may_run(person=person, tags=host_tags):
        return
    if host_tags:
        raise HostForbidden(
            "forbidden_host",
            f"You may not run jobs on hosts tagged {', '.join(host_tags)}: staff or the hosts' "
            "owners grant that right per host or per tag.",
            field="host_tags",
        )
    raise HostForbidden(
        "forbidden_host",
        "A job that names no host or tags may run on any host: only staff may queue one. Name "
        "a host you have the right to run on.",
        field=field,
    )


def host_grant_check(*, person: User, host: Host | None) -> None:
    """Raise HostForbidden unless `person` may grant rights: staff anywhere, owners on their host
    (rights per tag span hosts, so only staff grant those)."""
    if person.is_staff:
        return
    if host is not None and host.owners.filter(pk=person.pk).exists():
        return
    name = f"host '{host.name}'" if host is not None else "a host tag"
    raise HostForbidden(
        "forbidden_host", f"Only staff or the host's owners grant rights on {name}.", field="host"
    )
