"""Personal API tokens, and the abstract token model that runner tokens share."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class AbstractToken(models.Model):
    """A revocable, optionally expiring bearer token stored as a SHA-256 digest.

    Subclasses add what the token belongs to. `is_usable()` is the single test of whether a token
    may authenticate right now: revocation and expiry take effect on the next request.
    """

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def is_usable(self) -> bool:
        now = timezone.now()
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now


def read_only() -> list[str]:
    return ["read"]


class PersonalToken(AbstractToken):
    """A person's token for scripts: it acts with that person's permissions, within its scopes
    (checked by api.permissions): `read`, `import` (upload runs), `queue` (every other write)."""

    class Scope(models.TextChoices):
        READ = "read"
        IMPORT = "import"
        QUEUE = "queue"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    scopes = ArrayField(
        models.CharField(max_length=10, choices=Scope.choices), default=read_only, blank=True
    )

    def __str__(self) -> str:
        return f"{self.user} / {self.name} ({self.prefix})"
