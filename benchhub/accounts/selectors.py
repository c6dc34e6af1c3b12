"""Reads for people and their tokens."""

from django.contrib.auth.models import User
from django.db.models import QuerySet

from benchhub.accounts.models import PersonalToken

# A person keeps few tokens; the lists stop here rather than grow without bound.
TOKEN_LIST_LIMIT = 200


def personal_token_list(*, user: User) -> QuerySet[PersonalToken]:
    """`user`'s own personal tokens, newest first (revoked and expired ones too), at most
    TOKEN_LIST_LIMIT."""
    return PersonalToken.objects.filter(user=user).order_by("-created_at", "-id")[:TOKEN_LIST_LIMIT]


def personal_token_get(*, user: User, prefix: str) -> PersonalToken | None:
    """`user`'s token with this prefix; None when there is none or it is someone else's."""
    return PersonalToken.objects.filter(user=user, prefix=prefix).first()
