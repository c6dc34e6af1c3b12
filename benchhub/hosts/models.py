"""Hosts (benchmark machines), snapshots of their facts, and the tokens their agents use."""

import unicodedata
from typing import Any

from django.conf import settings as django_settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from benchhub.accounts.models import AbstractToken


def host_name_key(name: str) -> str:
    """The spelling-blind form of a host name (NFKC, case-folded, NFKC again, one trailing dot
    dropped): `BENCH-A`, `bench-a`, its full-width form and the fully qualified `bench-a.`
    share one, so no two hosts may hold them. Every look-up of a host by the name a person or
    an agent gave goes through it (`name_key`), as every write does."""
    key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    # DNS's root label: `bench-a.` is `bench-a` written absolutely, not another machine.
    return key[:-1] if len(key) > 1 and key.endswith(".") else key


class Host(models.Model):
    """A benchmark machine; `current_facts` is its latest snapshot. `name_key` is derived from
    `name` whenever the row is saved (host_name_key) and unique, so a reader never meets two
    hosts whose names differ only in case or in compatibility characters."""

    name = models.CharField(max_length=200, unique=True)
    name_key = models.CharField(max_length=800, unique=True, editable=False)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    current_facts = models.ForeignKey(
        "HostFacts", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Runs the host's agent set aside because this server refused them or kept failing on them
    # (the agent's report, replaced whole each time; runners/benchhub_runner/transport/spool.py).
    spool_set_aside = models.JSONField(default=list, blank=True)
    # The tablespace names the host's agent offered when it last claimed work (its config's
    # [tablespaces]): a job naming this host and another tablespace is refused when queued.
    tablespaces = ArrayField(models.CharField(max_length=63), default=list, blank=True)
    spool_reported_at = models.DateTimeField(null=True, blank=True)
    owners = models.ManyToManyField(
        django_settings.AUTH_USER_MODEL,
        blank=True,
        related_name="owned_hosts",
        help_text="may run jobs here and grant that right to others",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A derived column, not a rule: kept beside the name on every path that writes a host
        # (services, the admin, fixtures), so the unique index always sees the current name.
        self.name_key = host_name_key(self.name)
        if kwargs.get("update_fields") is not None and "name" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "name_key"}
        super().save(*args, **kwargs)


class HostFacts(models.Model):
    """What a host looked like at one moment. A new snapshot is stored only when facts change.

    Runs point at the snapshot they were measured on, so a run keeps its hardware and sysctl
    values even after the host is upgraded.
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="fact_snapshots")
    captured_at = models.DateTimeField(default=timezone.now)
    digest = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64, db_index=True)
    cpu_model = models.CharField(max_length=300, blank=True)
    sockets = models.PositiveIntegerField(null=True, blank=True)
    cores = models.PositiveIntegerField(null=True, blank=True)
    threads = models.PositiveIntegerField(null=True, blank=True)
    numa_nodes = models.PositiveIntegerField(null=True, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    storage = models.TextField(blank=True)
    filesystem = models.CharField(max_length=100, blank=True)
    kernel = models.CharField(max_length=300, blank=True)
    os = models.CharField(max_length=300, blank=True)
    virtualization = models.CharField(max_length=100, blank=True)
    lscpu = models.TextField(blank=True)
    sysctl = models.JSONField(default=dict, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-captured_at"]
        constraints = [
            models.UniqueConstraint(fields=["host", "digest"], name="hostfacts_unique_per_host"),
            models.CheckConstraint(
                condition=models.Q(memory_bytes__isnull=True) | models.Q(memory_bytes__gt=0),
                name="hostfacts_memory_positive",
            ),
        ]
        verbose_name_plural = "host facts"

    def __str__(self) -> str:
        return f"{self.host} @ {self.captured_at:%Y-%m-%d %H:%M}"


class RunnerToken(AbstractToken):
    """The token an agent on `host` authenticates with. It can act only for that host."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="runner_tokens")

    def __str__(self) -> str:
        return f"{self.host} / {self.name} ({self.prefix})"


class HostGrant(models.Model):
    """The right to run jobs (queue, schedule, queue again) on a host, or on every host with a
    tag, given to a person or a group. Without one, only staff and the host's owners may."""

    host = models.ForeignKey(
        Host, null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )
    tag = models.CharField(
        max_length=64, blank=True, help_text="or every host with this tag ('*': every host)"
    )
    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="host_grants",
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="host_grants"
    )
    granted_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-granted_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(host__isnull=False) & Q(tag="")) | (Q(host__isnull=True) & ~Q(tag="")),
                name="hostgrant_host_or_tag",
            ),
            models.CheckConstraint(
                condition=(Q(user__isnull=False) & Q(group__isnull=True))
                | (Q(user__isnull=True) & Q(group__isnull=False)),
                name="hostgrant_user_or_group",
            ),
        ]

    def __str__(self) -> str:
        target = f"host {self.host}" if self.host_id else f"tag {self.tag}"
        return f"{self.user or self.group} may run jobs on {target}"
