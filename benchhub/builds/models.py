"""PostgreSQL builds: the thing under test."""

from django.contrib.postgres.fields import ArrayField
from django.db import models


class Build(models.Model):
    """One PostgreSQL server build. Runs of the same build compare across hosts and configs."""

    class Origin(models.TextChoices):
        PREBUILT = "prebuilt", "prebuilt binaries"
        SOURCE = "source", "built from source"
        SYSTEM = "system", "system package"
        UNKNOWN = "unknown", "unknown (imported)"

    version = models.CharField(max_length=100, help_text="as users name it: 9.5.4, 14beta1, ...")
    major = models.CharField(max_length=10, help_text="9.5 before 10, 13 from 10 on, or master")
    minor = models.PositiveIntegerField(null=True, blank=True)
    stage = models.CharField(max_length=10, help_text="devel, alpha, beta, rc or release")
    stage_number = models.PositiveIntegerField(null=True, blank=True)
    snapshot_date = models.DateField(null=True, blank=True)
    commit = models.CharField(max_length=40, blank=True)
    configure_flags = models.TextField(blank=True)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.UNKNOWN)
    sort_key = ArrayField(models.IntegerField(), help_text="see builds.versions")

    class Meta:
        ordering = ["sort_key", "commit", "origin"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "commit", "configure_flags", "origin"], name="build_unique"
            ),
        ]
        indexes = [models.Index(fields=["sort_key"], name="build_sort_key")]

    def __str__(self) -> str:
        extra = f" @{self.commit[:10]}" if self.commit and self.commit not in self.version else ""
        return f"{self.version}{extra}"
