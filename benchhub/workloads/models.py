"""Workload definitions, deduplicated by a hash of everything that changes what is measured."""

from django.db import models
from django.utils import timezone


class Workload(models.Model):
    """A pgbench workload. Scale is a run parameter (see results.Run), not part of the definition.

    `scripts` is a list of {"name", "weight", "body"} for custom scripts, or of {"builtin",
    "weight"} entries for weighted builtins; `setup` lists SQL steps run before a sweep;
    `options` holds further pgbench options (e.g. ["--rate=1000"]).
    """

    class Builtin(models.TextChoices):
        TPCB_LIKE = "tpcb-like"
        SELECT_ONLY = "select-only"
        SIMPLE_UPDATE = "simple-update"

    class QueryMode(models.TextChoices):
        SIMPLE = "simple"
        EXTENDED = "extended"
        PREPARED = "prepared"

    name = models.CharField(max_length=200)
    builtin = models.CharField(max_length=20, choices=Builtin.choices, blank=True)
    scripts = models.JSONField(default=list, blank=True)
    setup = models.JSONField(default=list, blank=True)
    query_mode = models.CharField(
        max_length=10, choices=QueryMode.choices, default=QueryMode.SIMPLE
    )
    options = models.JSONField(default=list, blank=True)
    definition_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(builtin="") | ~models.Q(scripts=[]),
                name="workload_builtin_or_scripts",
            ),
        ]
        indexes = [models.Index(fields=["name"], name="workload_name")]

    def __str__(self) -> str:
        return self.name
