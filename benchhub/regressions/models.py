"""Regressions over history, and who is told about them.

A Regression (or an Improvement) is a change point that detection (regressions.detection, Apache
Otava through stats.changepoints) found in one series: the median tps of the runs of one
comparability key (host, workload, configuration, scale, duration held constant) at one client
level, in version order. It is unique on (series, first run after the change), so detecting again
updates it instead of adding another. Its state moves through triage; every move is a
RegressionEvent (who, when, from, to, note). Detection withdraws a stored change whose runs
before and after lie either side of a split of the series (state `withdrawn`, no actor).

People subscribe to hosts, workloads or everything (Subscription). What they are told is a
Notice: the confirmed changes of one alert group not told yet (or one drift), in one message;
each Notice is sent to each subscriber by email and to each of their webhooks, one Delivery row
per recipient, which is also the delivery log the subscriptions page shows.
"""

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

MAX_NOTE = 2000
MAX_WEBHOOK_URL = 500


class AlertGroup(models.Model):
    """The changes detected on one host between the same two builds, across client levels and
    workloads: one alert, as a person triages it (one commit range to bisect, one host to look
    at), however many series moved. `direction` is `regression` or `improvement` when every
    member went that way, `mixed` when some improved and others regressed (a change that trades
    one workload or level for another). Written by detection (regressions.services.group_file),
    never by hand."""

    class Direction(models.TextChoices):
        REGRESSION = "regression", "regression"
        IMPROVEMENT = "improvement", "improvement"
        MIXED = "mixed", "mixed (some improve, others regress)"

    host = models.ForeignKey("hosts.Host", on_delete=models.CASCADE, related_name="+")
    build_before = models.ForeignKey(
        "builds.Build",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="the last build before",
    )
    build_after = models.ForeignKey(
        "builds.Build",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="the first build after",
    )
    direction = models.CharField(max_length=12, choices=Direction.choices)
    members = models.PositiveIntegerField(default=0, help_text="changes in the group")
    worst_change = models.FloatField(help_text="the member change furthest from 0 (after/before-1)")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["host", "build_before", "build_after"], name="alertgroup_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.direction} on {self.host_id}: {self.build_before_id}..{self.build_after_id}"


class Regression(models.Model):
    class Kind(models.TextChoices):
        REGRESSION = "regression", "regression (tps fell)"
        IMPROVEMENT = "improvement", "improvement (tps rose)"
        # A slow trend over the newest weeks of a series (stats.drift), no single step: run
        # before and run after are the first and last runs of the window it was measured over.
        DRIFT = "drift", "drift (tps moved slowly over weeks)"

    class State(models.TextChoices):
        NEW = "new", "new"
        ACKNOWLEDGED = "acknowledged", "acknowledged"
        INVESTIGATING = "investigating", "investigating"
        FIXED = "fixed", "fixed"
        ACCEPTED = "accepted", "accepted"
        FALSE_POSITIVE = "false_positive", "false positive"
        # Detection's own verdict on a change it stored under an older rule: its runs before and
        # after lie either side of a split (not like with like). Marked, with the reason in the
        # note and the log, never deleted.
        WITHDRAWN = "withdrawn", "withdrawn (not like with like)"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.NEW)
    note = models.TextField(blank=True, help_text="the latest triage note")
    comparability_key = models.CharField(max_length=64)
    clients = models.PositiveIntegerField()
    host = models.ForeignKey("hosts.Host", on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey("workloads.Workload", on_delete=models.CASCADE, related_name="+")
    run_before = models.ForeignKey(
        "results.Run", on_delete=models.CASCADE, related_name="+", help_text="last run before"
    )
    run_after = models.ForeignKey(
        "results.Run", on_delete=models.CASCADE, related_name="+", help_text="first run after"
    )
    baseline_run = models.ForeignKey(
        "results.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the series' baseline mark the detection started from, if any",
    )
    before_tps = models.FloatField(help_text="mean of the medians of the runs before")
    after_tps = models.FloatField(help_text="mean of the medians of the runs after")
    before_runs = models.PositiveIntegerField()
    after_runs = models.PositiveIntegerField()
    change = models.FloatField(help_text="after / before - 1")
    change_low = models.FloatField(null=True, blank=True, help_text="95% interval, low end")
    change_high = models.FloatField(null=True, blank=True, help_text="95% interval, high end")
    p_value = models.FloatField()
    per_week = models.FloatField(
        null=True, blank=True, help_text="a drift's change a week (-0.005: 0.5% lost a week)"
    )
    # Counts only the detections whose windowed test agreed (regressions.detection.Change.agreed):
    # a change the runs around it do not bear out is listed but not sent.
    detections = models.PositiveIntegerField(
        default=1, help_text="detections that found it; it is notified once CONFIRM did"
    )
    group = models.ForeignKey(
        AlertGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="regressions",
        help_text="the alert it is filed under: its host and commit range",
    )
    # Set by the CONFIRMth agreeing detection of an upload (not of a backfill): the change is
    # due to be told. Null on a change not confirmed yet and on one that counts as told already
    # (a backfill's, or stored before notices were per alert), so neither is ever sent.
    confirmed_at = models.DateTimeField(
        null=True, blank=True, help_text="when it became due to be told"
    )
    notice = models.ForeignKey(
        "Notice",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="members",
        help_text="the notice that told it: it is told once",
    )
    detected_at = models.DateTimeField(default=timezone.now)
    redetected_at = models.DateTimeField(default=timezone.now)
    state_changed_at = models.DateTimeField(null=True, blank=True)
    state_changed_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-detected_at", "-id"]
        constraints = [
            # A step is keyed by its first run after; a drift's last run moves as runs arrive
            # (regressions.drifts keeps one a series), and may be a step's first run after.
            models.UniqueConstraint(
                fields=["comparability_key", "clients", "run_after"],
                condition=Q(kind__in=["regression", "improvement"]),
                name="regression_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["-detected_at", "-id"], name="regression_recent"),
            models.Index(fields=["state", "-detected_at"], name="regression_state"),
            models.Index(fields=["host", "workload", "clients"], name="regression_series"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.change:+.1%} at c={self.clients} ({self.run_after_id})"


class RegressionEvent(models.Model):
    """One state change of a regression: the triage log."""

    regression = models.ForeignKey(Regression, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    from_state = models.CharField(max_length=16, choices=Regression.State.choices)
    to_state = models.CharField(max_length=16, choices=Regression.State.choices)
    note = models.TextField(blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["regression", "-at"], name="regressionevent_log")]

    def __str__(self) -> str:
        return f"{self.regression_id}: {self.from_state} -> {self.to_state} by {self.actor_id}"


class Subscription(models.Model):
    """A person is told about changes on a host, of a workload, both, or ("" and "") every one."""

    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions"
    )
    host_name = models.CharField(max_length=200, blank=True, help_text='"" for every host')
    workload_name = models.CharField(max_length=200, blank=True, help_text='"" for every one')
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["host_name", "workload_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "host_name", "workload_name"], name="subscription_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.host_name or '*'} / {self.workload_name or '*'}"


class Webhook(models.Model):
    """A URL that a person's notifications are POSTed to, signed with its own secret."""

    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=MAX_WEBHOOK_URL)
    secret = models.CharField(max_length=64, help_text="HMAC-SHA256 key of the signature header")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} of {self.user_id}"


class Notice(models.Model):
    """One message to the people subscribed to an alert: the changes of an alert group that
    were confirmed and not told yet (its members: the first notice of a group names every one
    confirmed by then, an `update` only those confirmed since), or a drift alone (no group: a
    drift has no commit range). Written by regressions.notifications, never by hand."""

    group = models.ForeignKey(
        AlertGroup,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="notices",
        help_text="the alert group it tells of; null for a drift",
    )
    update = models.BooleanField(
        default=False, help_text="names only changes filed after the group's earlier notices"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"notice {self.pk} of group {self.group_id}"


class Delivery(models.Model):
    """One notice to one recipient: an email, or a webhook call."""

    class Channel(models.TextChoices):
        EMAIL = "email", "email"
        WEBHOOK = "webhook", "webhook"

    class Status(models.TextChoices):
        PENDING = "pending", "pending (retrying)"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed (gave up)"

    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="deliveries")
    user = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    channel = models.CharField(max_length=8, choices=Channel.choices)
    webhook = models.ForeignKey(
        Webhook, null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries"
    )
    recipient = models.CharField(max_length=MAX_WEBHOOK_URL, help_text="address or URL")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="why the last attempt failed")
    created_at = models.DateTimeField(default=timezone.now)
    attempted_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(channel="email") & Q(webhook__isnull=True))
                | (Q(channel="webhook") & Q(webhook__isnull=False)),
                name="delivery_channel_target",
            ),
            models.UniqueConstraint(
                fields=["notice", "user"],
                condition=Q(channel="email"),
                name="delivery_notice_one_email",
            ),
            models.UniqueConstraint(
                fields=["notice", "webhook"],
                condition=Q(channel="webhook"),
                name="delivery_notice_one_webhook",
            ),
        ]
        indexes = [models.Index(fields=["user", "-created_at"], name="delivery_user_recent")]

    def __str__(self) -> str:
        return f"{self.channel} of notice {self.notice_id} to {self.recipient}: {self.status}"
