"""Server configurations."""

from django.db import models
from django.utils import timezone


class ServerConfig(models.Model):
    """A set of chosen settings (see configs.hashing), stored once however many runs share it."""

    hash = models.CharField(max_length=64, unique=True)
    settings = models.JSONField(help_text="chosen settings: name -> value as SHOW prints it")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"config {self.hash[:12]} ({len(self.settings)} settings)"
