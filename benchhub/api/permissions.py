"""Who may do what through the API: people, agents, or anyone reading.

Agents authenticate as a subclass of AgentPrincipal (hosts.authentication.RunnerPrincipal), so the
permissions tell agents from people by this module's class alone.

A person's personal token carries scopes (accounts.models.PersonalToken.scopes): `read`,
`import` (upload runs), `queue` (every other write: jobs, schedules, cancels, review). Each
permission class below also checks that a request made with a personal token has the scope its
operation needs: a view says which in `token_scopes` ({method: scope}); by default reads need
`read` and writes `queue`, and a method mapped to None is not for tokens at all (creating and
revoking tokens is for a signed-in session, so a leaked token cannot mint more). A session or a
runner token is not scoped here.

This module imports no app: a write that takes a right of an app's own (defining build recipes)
is checked by WriteRuleOrReadOnly with a rule the view names, a function its app provides.
"""

from typing import Any

from django.contrib.auth.models import User
from rest_framework import permissions
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
NOT_FOR_TOKENS = None


def required_scope(request: Request, view: Any) -> str | None:
    """The scope a personal token needs for this request (None: no token may)."""
    declared = getattr(view, "token_scopes", {})
    if request.method in declared:
        return declared[request.method]
    return "read" if request.method in SAFE_METHODS else "queue"


def scope_problem(request: Request, view: Any) -> str | None:
    """Why the request's personal token may not do this, or None when it may (or is no token)."""
    scopes = getattr(request.auth, "scopes", None)
    if scopes is None:
        return None
    needed = required_scope(request, view)
    if needed is NOT_FOR_TOKENS:
        return "A personal token cannot do this: sign in (tokens cannot create tokens)."
    if needed not in scopes:
        return f"This token lacks the '{needed}' scope (it has: {', '.join(scopes) or 'none'})."
    return None


class ScopedPermission(BasePermission):
    """Base: `allowed()` is the class's own rule; the token's scope is checked after it."""

    def allowed(self, request: Request, view: Any) -> bool:
        raise NotImplementedError

    def has_permission(self, request: Request, view: Any) -> bool:
        if not self.allowed(request, view):
            return False
        problem = scope_problem(request, view)
        if problem:
            self.message = problem
            return False
        return True


class AgentPrincipal:
    """request.user of an agent: authenticated, never staff, never a person."""

    is_authenticated = True
    is_staff = False
    is_superuser = False
    is_active = True


def is_runner(request: Request) -> bool:
    return isinstance(request.user, AgentPrincipal)


def request_person(request: Request) -> User:
    """The signed-in person of a request that IsPerson (or an authenticated write) let through."""
    if not isinstance(request.user, User):
        raise NotAuthenticated()
    return request.user


class IsPerson(ScopedPermission):
    """A signed-in person (session or personal token), not an agent."""

    message = "This operation is for people, not agents."

    def allowed(self, request: Request, view: object) -> bool:
        return bool(request.user and request.user.is_authenticated and not is_runner(request))


class IsRunner(BasePermission):
    """An agent, with a runner token."""

    message = "This operation is for agents, with a runner token."

    def has_permission(self, request: Request, view: object) -> bool:
        return is_runner(request)


class IsPersonOrReadOnly(ScopedPermission):
    """Anyone but agents may read; people write. Agents see only the job they hold."""

    message = "Agents read only the job they hold; people sign in to change jobs."

    def allowed(self, request: Request, view: object) -> bool:
        if is_runner(request):
            return False
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return bool(request.user and request.user.is_authenticated)


class IsAuthenticatedOrReadOnly(ScopedPermission):
    """DRF's IsAuthenticatedOrReadOnly, with personal tokens' scopes checked."""

    message = "Sign in or send a token to change anything."

    def allowed(self, request: Request, view: Any) -> bool:
        return permissions.IsAuthenticatedOrReadOnly().has_permission(request, view)


class WriteRuleOrReadOnly(ScopedPermission):
    """Anyone but agents may read; a write takes the view's own rule: `write_rule(user) -> bool`,
    a function of the view's app (e.g. builds.selectors.can_define_recipes), refused with the
    view's `write_refusal`, a sentence saying who may."""

    message = "You may not change this."

    def allowed(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return not is_runner(request)
        if view.write_rule(request.user):
            return True
        self.message = getattr(view, "write_refusal", self.message)
        return False
