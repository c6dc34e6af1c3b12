"""Writes for hosts: recording facts and issuing runner tokens."""

from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchhub.accounts.tokens import RUNNER_KIND, token_issue
from benchhub.errors import ApplicationError
from benchhub.hosts.access import host_grant_check
from benchhub.hosts.facts import HARDWARE_FACTS, SOFTWARE_FACTS, facts_digest, hardware_fingerprint
from benchhub.hosts.models import Host, HostFacts, HostGrant, RunnerToken, host_name_key


class HostGrantInvalid(ApplicationError):
    """A grant that does not say on what or to whom."""


# Text facts are stored as "" when unknown (CharField), numbers as NULL.
_TEXT_FACTS = {
    name for name, kind in (*HARDWARE_FACTS.items(), *SOFTWARE_FACTS.items()) if kind is str
}


class HostNameTaken(ApplicationError):
    """A new host name that an existing host holds in another spelling."""

    status = 409


def host_get_or_create(*, name: str) -> Host:
    """The host named `name`, created if no host holds that name in any spelling.

    Raises HostNameTaken (409, field `host.name`) when another host's name differs from it only
    in letter case or compatibility characters (`BENCH-A` beside `bench-a`): readers would take
    one for the other."""
    key = host_name_key(name)
    host = Host.objects.filter(name_key=key).first()
    if host is None:
        try:
            with transaction.atomic():
                return Host.objects.create(name=name)
        except IntegrityError:
            # A concurrent first upload of the same host, or a look-alike.
            host = Host.objects.filter(name_key=key).first()
            if host is None:
                raise
    if host.name != name:
        raise HostNameTaken(
            "host_name_taken",
            f"Host {host.name!r} already exists; {name!r} differs from it only in letter case "
            "or character forms. Use its name, or a name of your own.",
            field="host.name",
        )
    return host


def host_facts_digest(
    *,
    facts: dict[str, Any],
    lscpu: str = "",
    sysctl: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    """What tells one snapshot of a host's facts from another (HostFacts.digest)."""
    return facts_digest(facts, {"lscpu": lscpu, "sysctl": sysctl or {}, "extra": extra or {}})


# No savepoint of its own: every failure in here fails the caller's whole write (an upload).
@transaction.atomic(savepoint=False)
def host_facts_record(
    *,
    host: Host,
    facts: dict[str, Any],
    lscpu: str = "",
    sysctl: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
    seen: bool = False,
    snapshot: HostFacts | None = None,
) -> HostFacts:
    """The snapshot matching these facts, created if they are new for this host.

    Locks the host row so two concurrent uploads from one host store one snapshot, and moves
    the host's `current_facts` to the returned snapshot. With `seen`, the host's
    `last_seen_at` becomes now, in the statement that takes the lock. `snapshot`: the one the
    caller read for these facts (host_facts_digest), when it did: a snapshot never changes,
    so a read before the lock stays true.
    """
    sysctl = sysctl or {}
    extra = extra or {}
    if seen:
        # An UPDATE locks the row as SELECT ... FOR UPDATE does: one round trip for both.
        Host.objects.filter(pk=host.pk).update(last_seen_at=timezone.now())
    else:
        Host.objects.select_for_update().filter(pk=host.pk).first()
    if snapshot is None:
        snapshot = _facts_snapshot(host=host, facts=facts, lscpu=lscpu, sysctl=sysctl, extra=extra)
    if host.current_facts_id != snapshot.pk:
        host.current_facts = snapshot
        host.save(update_fields=["current_facts"])
    return snapshot


def _facts_snapshot(
    *, host: Host, facts: dict[str, Any], lscpu: str, sysctl: dict[str, str], extra: dict[str, Any]
) -> HostFacts:
    """The host's snapshot of these facts, created if new; under the host's lock."""
    digest = host_facts_digest(facts=facts, lscpu=lscpu, sysctl=sysctl, extra=extra)
    # Known facts (nearly every upload) are read without their JSON and text (sysctl, lscpu,
    # extra): the run needs the snapshot's id and fingerprint. The host's lock keeps a
    # concurrent upload from creating the same snapshot between the read and the create.
    snapshot = HostFacts.objects.filter(host=host, digest=digest).only("id", "fingerprint").first()
    if snapshot is not None:
        return snapshot
    known = {name: facts.get(name) for name in (*HARDWARE_FACTS, *SOFTWARE_FACTS)}
    return HostFacts.objects.create(
        host=host,
        digest=digest,
        fingerprint=hardware_fingerprint(facts),
        **{k: ("" if v is None and k in _TEXT_FACTS else v) for k, v in known.items()},
        lscpu=lscpu,
        sysctl=sysctl,
        extra=extra,
    )


def runner_token_create(
    *, host_name: str, token_name: str = "", expires_at: datetime | None = None
) -> tuple[RunnerToken, str]:
    """Issue a token for the agent of `host_name` (creating the host).

    Returns the token and its plaintext, which is shown once and not stored.
    """
    host = host_get_or_create(name=host_name)
    issued = token_issue(RUNNER_KIND)
    token = RunnerToken.objects.create(
        host=host,
        name=token_name or host_name,
        prefix=issued.prefix,
        digest=issued.digest,
        expires_at=expires_at,
    )
    return token, issued.plaintext


def runner_tokens_revoke_ids(*, token_ids: list[int]) -> int:
    """Revoke the given tokens (those still live); returns how many were revoked. Effective on
    each agent's next request."""
    return RunnerToken.objects.filter(pk__in=token_ids, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def runner_tokens_revoke(*, host_name: str) -> int:
    """Revoke every live token of the host; returns how many were revoked."""
    live = RunnerToken.objects.filter(
        host__name_key=host_name_key(host_name), revoked_at__isnull=True
    )
    return live.update(revoked_at=timezone.now())


def host_spool_report(*, host: Host, set_aside: list[dict[str, Any]]) -> None:
    """Store the runs `host`'s agent has set aside (as HostSpoolReportInSerializer validated
    them), replacing its last report. One UPDATE; the host page shows them."""
    Host.objects.filter(pk=host.pk).update(
        spool_set_aside=set_aside, spool_reported_at=timezone.now()
    )


def host_grant_add(
    *,
    by: User,
    host: Host | None = None,
    tag: str = "",
    user: User | None = None,
    group: Group | None = None,
) -> HostGrant:
    """Give `user` or `group` the right to run jobs on `host` (or on every host tagged `tag`).

    `by` must be staff, or an owner of `host` (HostForbidden otherwise). Exactly one of host and
    tag, and one of user and group (HostGrantInvalid otherwise).
    """
    if (host is None) == (not tag):
        raise HostGrantInvalid("invalid", "A grant names a host or a tag.", field="host")
    if (user is None) == (group is None):
        raise HostGrantInvalid("invalid", "A grant names a person or a group.", field="user")
    host_grant_check(person=by, host=host)
    grant, _ = HostGrant.objects.get_or_create(
        host=host, tag=tag, user=user, group=group, defaults={"granted_by": by}
    )
    return grant


def host_grant_remove(*, by: User, grant: HostGrant) -> None:
    """Take a right back; same rule as granting it."""
    host_grant_check(person=by, host=grant.host)
    grant.delete()
