"""Refusing anonymous API callers on a private instance.

The bearer tokens themselves are authenticated by hosts.authentication.TokenAuthentication.
"""

from django.conf import settings
from rest_framework import authentication, exceptions
from rest_framework.request import Request


class PrivateInstanceAuthentication(authentication.BaseAuthentication):
    """Last in the list: on a private instance (settings.PRIVATE), a request that no other class
    authenticated is refused with 401 instead of going on as anonymous, whatever the view's
    permissions would let anonymous visitors read."""

    def authenticate(self, request: Request) -> None:
        if settings.PRIVATE:
            raise exceptions.NotAuthenticated("This BenchHub is private: sign in or send a token.")
        return None

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"  # the scheme TokenAuthentication answers to
