"""Writes for people and their tokens."""

import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.utils import timezone

from benchhub.accounts.models import PersonalToken
from benchhub.accounts.tokens import PERSONAL_KIND, token_issue

# Every personal token expires: by default after this many days, at most after MAX_TOKEN_DAYS.
DEFAULT_TOKEN_DAYS = 90
MAX_TOKEN_DAYS = 365


def personal_token_create(
    *,
    user: User,
    name: str,
    scopes: Sequence[str] = tuple(PersonalToken.Scope.values),
    expires_at: datetime | None = None,
) -> tuple[PersonalToken, str]:
    """Create a token for `user` with `scopes`; returns it with the plaintext, which is not
    stored anywhere. Without `expires_at` it expires DEFAULT_TOKEN_DAYS from now. (The API asks
    for scopes and defaults to read only; the default here is for code that means all.)"""
    issued = token_issue(PERSONAL_KIND)
    if expires_at is None:
        expires_at = timezone.now() + timedelta(days=DEFAULT_TOKEN_DAYS)
    token = PersonalToken.objects.create(
        user=user,
        name=name,
        scopes=list(scopes),
        prefix=issued.prefix,
        digest=issued.digest,
        expires_at=expires_at,
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
