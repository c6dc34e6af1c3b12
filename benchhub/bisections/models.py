"""A bisection: which commit of a git recipe's range carries a performance change.

States: listing (its listing job lists the range) -> running (the ends, then one commit per
step) -> found | narrowed | failed | cancelled. Each commit of the range is a BisectionCommit
(position 0 the bad end) that carries its outcome once measured.
"""

from benchhub_runner.jobspec.plan import PLAN_FIELDS
from django.conf import settings as django_settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Bisection(models.Model):
    class State(models.TextChoices):
        LISTING = "listing"
        RUNNING = "running"
        FOUND = "found"
        NARROWED = "narrowed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    OPEN = (State.LISTING, State.RUNNING)

    recipe = models.ForeignKey("builds.Recipe", on_delete=models.PROTECT, related_name="+")
    good_ref = models.CharField(max_length=200, help_text="a commit, tag or branch")
    bad_ref = models.CharField(max_length=200)
    good_sha = models.CharField(max_length=40, blank=True, help_text="once the range is listed")
    bad_sha = models.CharField(max_length=40, blank=True)
    host = models.ForeignKey("hosts.Host", on_delete=models.PROTECT, related_name="+")
    workload = models.JSONField(help_text="the workload definition, as a job takes it")
    scale = models.PositiveIntegerField(null=True, blank=True)
    duration_s = models.FloatField()
    warmup_s = models.FloatField(null=True, blank=True)
    config_overrides = models.JSONField(default=dict, blank=True)
    clients = models.PositiveIntegerField(help_text="the one client level measured")
    repeats = models.PositiveIntegerField(default=3, help_text="per step")
    max_repeats = models.PositiveIntegerField(
        default=9, help_text="a commit still unknown after this many repeats is skipped"
    )
    change = models.FloatField(
        null=True, blank=True, help_text="bad / good in tps as given; null: measured from the ends"
    )
    good_tps = models.FloatField(null=True, blank=True, help_text="the good end's mean tps")
    change_used = models.FloatField(null=True, blank=True, help_text="the change looked for")
    good_run = models.ForeignKey(
        "results.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the comparison it started from: the good run",
    )
    bad_run = models.ForeignKey(
        "results.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    regression = models.ForeignKey(
        "regressions.Regression",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the detected regression it started from",
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.LISTING)
    culprit = models.CharField(max_length=40, blank=True, help_text="the first bad commit")
    message = models.TextField(blank=True, help_text="why it failed, or narrowed")
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(repeats__gte=2, repeats__lte=20), name="bisection_repeats_range"
            ),
            models.CheckConstraint(
                condition=Q(max_repeats__lte=30), name="bisection_max_repeats_bound"
            ),
        ]

    def __str__(self) -> str:
        return f"bisection {self.pk} ({self.recipe_id}: {self.good_ref}..{self.bad_ref})"


# The plan fields (benchhub_runner.jobspec.plan) a bisection stores as a job takes them and gives
# each of its jobs: every plan field it has a column of, but clients (one level here, not a list)
# and repeats (per step, with a bisection's own default and bounds).
BISECTION_PLAN_FIELDS: tuple[str, ...] = tuple(
    name
    for name in PLAN_FIELDS
    if name not in ("clients", "repeats")
    and name in {column.name for column in Bisection._meta.concrete_fields}
)


class BisectionCommit(models.Model):
    """One commit of the range and, once measured, its outcome."""

    class Verdict(models.TextChoices):
        NONE = "", "not measured"
        GOOD = "good"
        BAD = "bad"
        UNKNOWN = "unknown"
        SKIPPED = "skipped"

    bisection = models.ForeignKey(Bisection, on_delete=models.CASCADE, related_name="commits")
    position = models.PositiveIntegerField(help_text="0 the bad end, then older")
    sha = models.CharField(max_length=40)
    parents = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    author = models.CharField(max_length=200, blank=True)
    date = models.CharField(max_length=40, blank=True, help_text="commit date, UTC ISO 8601")
    subject = models.CharField(max_length=200, blank=True)
    files = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    files_total = models.PositiveIntegerField(default=0)
    verdict = models.CharField(max_length=10, choices=Verdict.choices, blank=True, default="")
    tps = models.FloatField(null=True, blank=True, help_text="mean steady-state tps")
    low = models.FloatField(null=True, blank=True, help_text="position interval, 0 good 1 bad")
    high = models.FloatField(null=True, blank=True)
    position_value = models.FloatField(null=True, blank=True, help_text="0 good, 1 bad")
    repeats = models.PositiveIntegerField(default=0, help_text="repeats measured")
    step = models.PositiveIntegerField(null=True, blank=True, help_text="order first measured")
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["bisection", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["bisection", "position"], name="bisectioncommit_position_unique"
            ),
            models.UniqueConstraint(fields=["bisection", "sha"], name="bisectioncommit_sha_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.sha[:12]} {self.subject[:40]}"
