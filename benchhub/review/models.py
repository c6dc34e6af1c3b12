"""Team review: comments on runs and comparisons, tags on runs, and the log of who did what.

A comment belongs to exactly one target: a run, or a comparison named by its comparison key (the
compare permalink's normalised query string, see review.keys). Marks (baseline, invalid) live on
the Run itself, because comparisons filter on them; every change to a mark, tag or thread is a
ReviewEvent, so the review history says who did what and when.
"""

from django.conf import settings as django_settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

TAG_NAME = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]{0,49}$",
    "Use 1 to 50 lower-case letters, digits and . _ -, starting with a letter or digit.",
)
MAX_KEY = 1000


class Comment(models.Model):
    author = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    body = models.TextField(help_text="Markdown; rendered sanitised (review.markdown)")
    run = models.ForeignKey(
        "results.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="comments"
    )
    comparison_key = models.CharField(max_length=MAX_KEY, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(run__isnull=False) & Q(comparison_key=""))
                | (Q(run__isnull=True) & ~Q(comparison_key="")),
                name="comment_one_target",
            ),
        ]
        indexes = [
            models.Index(
                fields=["comparison_key", "created_at"],
                name="comment_comparison",
                condition=~Q(comparison_key=""),
            ),
        ]

    def __str__(self) -> str:
        target = self.run or self.comparison_key
        return f"comment by {self.author_id} on {target}"


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True, validators=[TAG_NAME])
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RunTag(models.Model):
    run = models.ForeignKey("results.Run", on_delete=models.CASCADE, related_name="run_tags")
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="run_tags")
    added_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["tag__name"]
        constraints = [models.UniqueConstraint(fields=["run", "tag"], name="runtag_unique")]

    def __str__(self) -> str:
        return f"{self.run} #{self.tag}"


class ReviewEvent(models.Model):
    """One review action. Kept when its run is deleted (run becomes null)."""

    class Verb(models.TextChoices):
        COMMENTED = "commented", "commented"
        TAGGED = "tagged", "tagged"
        UNTAGGED = "untagged", "untagged"
        MARKED_BASELINE = "marked_baseline", "marked baseline"
        UNMARKED_BASELINE = "unmarked_baseline", "unmarked baseline"
        MARKED_INVALID = "marked_invalid", "marked invalid"
        UNMARKED_INVALID = "unmarked_invalid", "unmarked invalid"
        EXPLAINED_UNSTEADY = "explained_unsteady", "explained unsteady throughput"
        UNEXPLAINED_UNSTEADY = "unexplained_unsteady", "withdrew the explanation"

    actor = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    verb = models.CharField(max_length=20, choices=Verb.choices)
    run = models.ForeignKey(
        "results.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_events",
    )
    comparison_key = models.CharField(max_length=MAX_KEY, blank=True, default="")
    detail = models.TextField(blank=True, help_text="tag name, reason, or comment excerpt")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["-at", "-id"], name="reviewevent_recent"),
            models.Index(fields=["run", "-at"], name="reviewevent_run"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_id} {self.verb} {self.run_id or self.comparison_key} @ {self.at}"
