"""PostgreSQL builds: the thing under test, and the recipes the agent builds them from."""

from django.conf import settings as django_settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone


class Recipe(models.Model):
    """How to build one PostgreSQL version from source: its name as users say it (a version
    name, see builds.versions: `master+pgxact-split`, `14devel-2021-05-01`), a source, patches,
    configure flags, CFLAGS and contrib modules. A job naming it sends the agent its build spec
    (builds.specs). Validated by builds.services against the agent's own spec rules."""

    class Kind(models.TextChoices):
        RELEASE = "release", "an official release, by name"
        TARBALL = "tarball", "a source tarball (URL or path on the agent host) with its sha256"
        GIT = "git", "a git repository and a ref, or a branch and a date"

    name = models.CharField(max_length=100, help_text="a version name: 9.6.24, master+my-patch")
    base = models.CharField(
        max_length=100, blank=True, help_text="a release or another recipe it sorts right after"
    )
    description = models.TextField(blank=True, max_length=2000)
    source_kind = models.CharField(max_length=10, choices=Kind.choices)
    release = models.CharField(max_length=30, blank=True, help_text="release: 15.18, 14beta1")
    url = models.CharField(max_length=1000, blank=True, help_text="tarball or repository URL")
    path = models.CharField(max_length=1000, blank=True, help_text="tarball on the agent host")
    sha256 = models.CharField(max_length=64, blank=True, help_text="tarball: its sha256")
    ref = models.CharField(max_length=200, blank=True, help_text="git: commit, tag or branch")
    branch = models.CharField(max_length=200, blank=True, help_text="git: with a date")
    snapshot_date = models.DateField(null=True, blank=True, help_text="git: last commit by then")
    configure_flags = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    cflags = models.CharField(max_length=1000, blank=True)
    contrib = ArrayField(models.CharField(max_length=63), default=list, blank=True)
    sort_key = ArrayField(models.IntegerField(), help_text="its base's key, then its label")
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["sort_key", "name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="recipe_name_unique"),
            models.CheckConstraint(
                condition=models.Q(source_kind__in=["release", "tarball", "git"]),
                name="recipe_source_kind",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Patch(models.Model):
    """A patch of a recipe, applied in `position` order (`patch -p1`). The text is stored as
    uploaded (UTF-8); `sha256` is of those bytes, which is what the agent checks."""

    recipe = models.ForeignKey(Recipe, on_delete=models.CASCADE, related_name="patches")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    size = models.PositiveIntegerField(help_text="bytes")
    uploaded_at = models.DateTimeField(default=timezone.now)
    uploaded_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["recipe", "position"]
        constraints = [
            models.UniqueConstraint(fields=["recipe", "position"], name="patch_position_unique"),
            models.UniqueConstraint(fields=["recipe", "name"], name="patch_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.recipe.name} #{self.position} {self.name}"


class Build(models.Model):
    """One PostgreSQL server build. Runs of the same build compare across hosts and configs.

    A build from source is one resolved input: two builds that share a name but differ in
    commit, patches, flags or compiler have different `input_key`s (the agent's install key)
    and are different builds. `provenance` is what the agent recorded when it built it.
    """

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
    input_key = models.CharField(
        max_length=64, blank=True, help_text="built from source: the agent's install key"
    )
    provenance = models.JSONField(default=dict, blank=True, help_text="as the agent recorded it")
    recipe = models.ForeignKey(
        Recipe, null=True, blank=True, on_delete=models.SET_NULL, related_name="builds"
    )

    class Meta:
        ordering = ["sort_key", "commit", "origin"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "commit", "configure_flags", "origin", "input_key"],
                name="build_unique_input",
            ),
        ]
        indexes = [models.Index(fields=["sort_key"], name="build_sort_key")]

    def __str__(self) -> str:
        extra = f" @{self.commit[:10]}" if self.commit and self.commit not in self.version else ""
        return f"{self.version}{extra}"
