"""Workload definitions, deduplicated by a hash of everything that changes what is measured."""

from benchhub_runner.jobspec import plan
from django.db import models
from django.utils import timezone


class Workload(models.Model):
    """A pgbench workload. Scale is a run parameter (see results.Run), not part of the definition.

    `scripts` is a list of {"name", "weight", "body"} for custom scripts, or of {"builtin",
    "weight"} entries for weighted builtins; `setup` lists SQL steps run once before a sweep
    (`{max_clients}` stands for the largest client level); `level_setup` lists SQL steps run
    before every measurement (`{clients}` stands for its level); `options` holds further
    pgbench options (e.g. ["--rate=1000"]).

    `streams` describes several pgbench processes run at once (docs/workloads.md): each is
    {"name", "role" ("measured" or "background"), "builtin", "scripts", "clients" (null: the
    level's), "threads" (null: the job's policy), "per_client" (one single-client process per
    client, `{n}` in its scripts standing for the process number), "rows_per_transaction"}.
    With no streams the workload is one measured stream of its own builtin or scripts.
    `combine` says how a level's tps comes from the measured streams: their sum, or the one
    measured stream. `catalog_entry` and `params` name the catalog workload it was made from;
    `presentation` tells the pages how its authors presented it.
    """

    class Builtin(models.TextChoices):
        TPCB_LIKE = "tpcb-like"
        SELECT_ONLY = "select-only"
        SIMPLE_UPDATE = "simple-update"

    class Combine(models.TextChoices):
        SUM = plan.Combine.SUM.value, "the sum of the measured streams' tps"
        MEASURED = plan.Combine.MEASURED.value, "the tps of the one measured stream"

    class Presentation(models.TextChoices):
        SWEEP = "sweep", "tps against clients, one line per version"
        CONNECTIONS = "connections", "a table of connections against tps, and the progress"
        EVIDENCE = "evidence", "tps with the OS evidence (iowait, device use) beside it"
        STREAMS = "streams", "each stream's tps, latency and rows per second"
        IMPROVEMENT = "improvement", "an improvement table: connections, tps old, tps new, %"

    class QueryMode(models.TextChoices):
        SIMPLE = plan.QueryMode.SIMPLE.value
        EXTENDED = plan.QueryMode.EXTENDED.value
        PREPARED = plan.QueryMode.PREPARED.value

    name = models.CharField(max_length=200)
    builtin = models.CharField(max_length=20, choices=Builtin.choices, blank=True)
    scripts = models.JSONField(default=list, blank=True)
    setup = models.JSONField(default=list, blank=True)
    query_mode = models.CharField(
        max_length=10, choices=QueryMode.choices, default=plan.QUERY_MODE_DEFAULT.value
    )
    options = models.JSONField(default=list, blank=True)
    level_setup = models.JSONField(default=list, blank=True)
    streams = models.JSONField(default=list, blank=True)
    combine = models.CharField(max_length=10, choices=Combine.choices, default=Combine.SUM)
    progress_s = models.PositiveSmallIntegerField(default=1, help_text="pgbench -P interval")
    catalog_entry = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    presentation = models.CharField(
        max_length=12, choices=Presentation.choices, default=Presentation.SWEEP
    )
    definition_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(builtin="") | ~models.Q(scripts=[]) | ~models.Q(streams=[]),
                name="workload_builtin_or_scripts",
            ),
        ]
        indexes = [
            models.Index(fields=["name"], name="workload_name"),
            models.Index(fields=["catalog_entry"], name="workload_catalog_entry"),
        ]

    def __str__(self) -> str:
        return self.name
