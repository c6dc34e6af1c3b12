"""Writes for people and their tokens."""

import secrets
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.utils import timezone

from benchhub.accounts.models import PersonalToken
from benchhub.accounts.tokens import PERSONAL_KIND, token_issue


def personal_token_create(
    *, user: User, name: str, expires_at: datetime | None = None
) -> tuple[PersonalToken, str]:
    """Create a token for `user`; returns it with the plaintext, which is not stored anywhere."""
    issued = token_issue(PERSONAL_KIND)
    token = PersonalToken.objects.create(
        user=user, name=name, prefix=issued.prefix, digest=issued.digest, expires_at=expires_at
    )
    return token, issued.plaintext


def personal_token_revoke(*, token: PersonalToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def admin_ensure(*, username: str, password: str | None) -> str | None:
    """Create the superuser `username` if it does not exist.

    Returns the password when one was generated (to be shown once), None otherwise. An existing
    account is left untouched, so a second `make up` never resets a password someone changed.
    """
    users = get_user_model()
    if users.objects.filter(username=username).exists():
        return None
    generated = None
    if not password:
        password = generated = secrets.token_urlsafe(12)
    users.objects.create_superuser(username=username, email="", password=password)
    return generated
