"""Jobs: a benchmark plan that one agent runs, yielding one run per requested version.

States: queued -> claimed -> running -> done | failed | cancelled | expired. A claim carries a
lease that heartbeats renew; a lapsed lease puts the job back in the queue (a new attempt) until
`max_attempts` is reached, then it is expired. Each transition is a JobEvent, so the history of a
job says who did what and when.
"""

from benchhub_runner.jobspec import plan
from django.conf import settings as django_settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Job(models.Model):
    """A job: its plan's fields (benchhub_runner.jobspec.plan: the enums below take its values) and
    the queue's own."""

    class State(models.TextChoices):
        QUEUED = "queued"
        CLAIMED = "claimed"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"
        EXPIRED = "expired"

    class Order(models.TextChoices):
        INTERLEAVED = (
            plan.Order.INTERLEAVED.value,
            "interleaved: each level and repeat, every version in turn",
        )
        SEQUENTIAL = (
            plan.Order.SEQUENTIAL.value,
            "sequential: one version's whole sweep after the other",
        )

    class Threads(models.TextChoices):
        CLIENTS = plan.ThreadsPolicy.CLIENTS.value, "-j equal to clients"
        FIXED = plan.ThreadsPolicy.FIXED.value, "-j fixed"
        PAIRS = plan.ThreadsPolicy.PAIRS.value, "-j given for each client level"

    class LevelOrder(models.TextChoices):
        GIVEN = (
            plan.LevelOrder.GIVEN.value,
            "the client levels in the order given, each level's repeats together",
        )
        SHUFFLED = (
            plan.LevelOrder.SHUFFLED.value,
            "each repeat a new shuffle of the levels, from shuffle_seed",
        )

    ACTIVE = (State.CLAIMED, State.RUNNING)
    FINAL = (State.DONE, State.FAILED, State.CANCELLED, State.EXPIRED)

    versions = ArrayField(models.CharField(max_length=100), help_text="e.g. ['13', '14']")
    builds = models.JSONField(
        default=dict,
        blank=True,
        help_text="the build spec of each version that names a recipe, as it was when queued",
    )
    workload = models.JSONField(help_text="the workload, as in a run upload")
    scale = models.PositiveIntegerField(null=True, blank=True)
    clients = ArrayField(models.PositiveIntegerField())
    profile_clients = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="the client level the agent profiles (perf) after its repeats; null: the "
        "largest level",
    )
    threads_policy = models.CharField(
        max_length=10, choices=Threads.choices, default=Threads.CLIENTS
    )
    threads = models.PositiveIntegerField(null=True, blank=True, help_text="for the fixed policy")
    level_threads = models.JSONField(
        default=dict, blank=True, help_text='for the pairs policy: {"52": 52, "208": 104}'
    )
    duration_s = models.FloatField(null=True, blank=True)
    level_durations = models.JSONField(
        default=dict, blank=True, help_text='pgbench -T of some levels, s: {"2048": 360}'
    )
    transactions_per_client = models.PositiveBigIntegerField(null=True, blank=True)
    warmup_s = models.FloatField(
        null=True, blank=True, help_text="warm-up before each measurement, s (0: none)"
    )
    level_order = models.CharField(
        max_length=10, choices=LevelOrder.choices, default=LevelOrder.GIVEN
    )
    shuffle_seed = models.BigIntegerField(null=True, blank=True)
    repeats = models.PositiveIntegerField(default=plan.plan_default("repeats"))
    config_overrides = models.JSONField(default=dict, blank=True)
    client = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text="the pgbench client: '' the newest the host has or builds for the job, "
        "'configured' the agent's own, or a version whose pgbench drives every server",
    )
    order = models.CharField(max_length=12, choices=Order.choices, default=Order.INTERLEAVED)
    aa = models.BooleanField(
        default=False,
        help_text="A/A: the one version against itself, two separate series (versions names it "
        "twice), so their comparison measures the noise",
    )
    host = models.ForeignKey(
        "hosts.Host",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="jobs",
        help_text="run only on this host",
    )
    host_tags = ArrayField(
        models.CharField(max_length=64),
        default=list,
        blank=True,
        help_text="or on any host that has all these tags",
    )
    tablespaces = ArrayField(
        models.CharField(max_length=63),
        default=list,
        blank=True,
        help_text="tablespaces the agent creates on each server, by the names its host maps to "
        "directories; only a host offering all of them claims the job",
    )
    priority = models.IntegerField(default=0, help_text="higher runs first")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    schedule = models.ForeignKey(
        "JobSchedule", null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    attempt = models.PositiveIntegerField(default=0, help_text="claims so far")
    max_attempts = models.PositiveIntegerField(default=3)
    claimed_by = models.ForeignKey(
        "hosts.RunnerToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_host = models.ForeignKey(
        "hosts.Host", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_heartbeat_at = models.DateTimeField(null=True, blank=True)
    progress = models.JSONField(default=dict, blank=True, help_text="the agent's last report")
    failure_stage = models.CharField(max_length=50, blank=True)
    failure_message = models.TextField(blank=True)
    bisection = models.ForeignKey(
        "bisections.Bisection",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="jobs",
        help_text="the bisection this job is a step of",
    )
    bisect_range = models.JSONField(
        default=dict,
        blank=True,
        help_text='a bisection\'s listing job only: {"url", "good", "bad"}; the agent lists the '
        "range and measures nothing",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(duration_s__isnull=True) | Q(transactions_per_client__isnull=True),
                name="job_duration_or_transactions",
            ),
            models.CheckConstraint(
                condition=~Q(threads_policy="fixed") | Q(threads__isnull=False),
                name="job_fixed_threads_given",
            ),
            models.CheckConstraint(condition=Q(repeats__gte=1), name="job_repeats_positive"),
            models.CheckConstraint(
                condition=~Q(state__in=["claimed", "running"]) | Q(lease_expires_at__isnull=False),
                name="job_active_has_lease",
            ),
        ]
        indexes = [
            # The claim query: queued jobs by priority then age.
            models.Index(
                fields=["-priority", "created_at"],
                name="job_claim_order",
                condition=Q(state="queued"),
            ),
            models.Index(
                fields=["lease_expires_at"],
                name="job_active_lease",
                condition=Q(state__in=["claimed", "running"]),
            ),
            models.Index(fields=["state", "-created_at"], name="job_state_created"),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} ({', '.join(self.versions)} / {self.workload.get('name', '?')})"


class JobEvent(models.Model):
    """One step in a job's history: a state change, a heartbeat milestone, a failure."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=30)
    attempt = models.PositiveIntegerField(default=0)
    actor = models.CharField(max_length=200, blank=True, help_text="a user, a runner, or beat")
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["job", "at"], name="jobevent_job_at")]

    def __str__(self) -> str:
        return f"{self.job_id} {self.kind} @ {self.at:%H:%M:%S}"


class JobSchedule(models.Model):
    """A recurring job: `template` holds a job's fields; beat queues one on `crontab`."""

    name = models.CharField(max_length=200, unique=True)
    template = models.JSONField(help_text="fields of the job to queue, as the job API takes them")
    crontab = models.CharField(max_length=100, help_text="minute hour day month weekday, UTC")
    enabled = models.BooleanField(default=True)
    file_set = models.CharField(
        max_length=100,
        blank=True,
        help_text="the set of files `benchhub apply --set` keeps this schedule in step with; "
        "empty for a schedule made by hand (page, API, `benchhub submit`), which apply never "
        "deletes",
    )
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    periodic_task = models.OneToOneField(
        "django_celery_beat.PeriodicTask",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    def __str__(self) -> str:
        return f"{self.name} ({self.crontab})"
