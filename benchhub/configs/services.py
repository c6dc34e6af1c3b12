"""Writes for server configurations."""

from benchhub.configs.hashing import chosen_settings, config_hash
from benchhub.configs.models import ServerConfig


def config_get_or_create(
    *, settings: dict[str, str], sources: dict[str, str] | None = None
) -> ServerConfig:
    """The stored configuration for these chosen settings, created if new."""
    config, _ = ServerConfig.objects.get_or_create(
        hash=config_hash(settings, sources),
        defaults={"settings": chosen_settings(settings, sources)},
    )
    return config
