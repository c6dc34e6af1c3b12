"""Bearer-token authentication for agents (runner tokens) and people's scripts (personal tokens).

`Authorization: Bearer bhr_...` authenticates an agent: request.user is a RunnerPrincipal bound to
its host and request.auth the RunnerToken. `Bearer bhp_...` authenticates a person: request.user
is that user and request.auth the PersonalToken. A revoked or expired token fails at once.

Tokens that are malformed or match nothing count against the client address's rate limit
(accounts.ratelimit); past it the answer is 429 with Retry-After instead of 401. A revoked or
expired token does not count: its holder had the secret, and is told so plainly.

It lives in hosts, not in api/ (plumbing that imports no app), because it reads both kinds of token:
runner tokens are a host's, and hosts already builds on accounts' token base.
"""

from dataclasses import dataclass
from typing import NoReturn, cast

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from benchhub.accounts import ratelimit
from benchhub.accounts.models import AbstractToken, PersonalToken
from benchhub.accounts.tokens import RUNNER_KIND, token_matches, token_split
from benchhub.api.permissions import AgentPrincipal, IsRunner
from benchhub.hosts.models import Host, RunnerToken

# last_used_at is written at most this often per token, so polling agents don't write every call.
LAST_USED_RESOLUTION_S = 60


@dataclass
class RunnerPrincipal(AgentPrincipal):
    """The identity of an agent: it may act for `host` only."""

    token: RunnerToken

    @property
    def host(self) -> Host:
        return self.token.host

    @property
    def pk(self) -> None:
        return None

    def __str__(self) -> str:
        return f"runner {self.token.name} of {self.token.host.name}"


def _touch(token: RunnerToken | PersonalToken) -> None:
    now = timezone.now()
    if (
        token.last_used_at is None
        or (now - token.last_used_at).total_seconds() > LAST_USED_RESOLUTION_S
    ):
        type(token).objects.filter(pk=token.pk).update(last_used_at=now)


def _failed(request: Request, detail: str) -> NoReturn:
    """Refuse a token that matches nothing: 401, or 429 once the address is past its limit."""
    try:
        ratelimit.ratelimit_fail(
            limit=ratelimit.token_ip_limit(), ident=ratelimit.client_ip(request)
        )
    except ratelimit.RateLimited as exc:
        raise exceptions.Throttled(
            wait=exc.retry_after, detail="Too many failed token attempts from this address."
        ) from None
    raise exceptions.AuthenticationFailed(detail)


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[object, AbstractToken] | None:
        header = authentication.get_authorization_header(request).decode(errors="replace")
        if not header:
            return None
        scheme, _, plaintext = header.partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return None
        parts = token_split(plaintext.strip())
        if parts is None:
            _failed(request, "Malformed token.")
        kind, prefix = parts
        model = RunnerToken if kind == RUNNER_KIND else PersonalToken
        related = "host" if model is RunnerToken else "user"
        # The prefix is unique: no ORDER BY for first() to compile on every request.
        found = model.objects.select_related(related).filter(prefix=prefix)
        token = cast(RunnerToken | PersonalToken | None, next(iter(found), None))
        if token is None or not token_matches(plaintext.strip(), token.digest):
            _failed(request, "Invalid token.")
        if not token.is_usable():
            raise exceptions.AuthenticationFailed("Token revoked or expired.")
        _touch(token)
        if isinstance(token, RunnerToken):
            return RunnerPrincipal(token), token
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive.")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def request_runner_token(request: Request) -> RunnerToken:
    """The runner token of a request that IsRunner let through."""
    if not isinstance(request.auth, RunnerToken):
        raise exceptions.PermissionDenied(IsRunner.message)
    return request.auth


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """OpenAPI: `Authorization: Bearer bhr_…` (agents) or `bhp_…` (people's scripts)."""

    target_class = TokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, auto_schema: object) -> dict:
        return build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix="Bearer",  # noqa: S106 - the scheme's name, not a secret
        )
