"""Who may do what through the API: people, agents, or anyone reading.

Agents authenticate as a subclass of AgentPrincipal (hosts.authentication.RunnerPrincipal), so the
permissions tell agents from people by this module's class alone.
"""

from django.contrib.auth.models import User
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission
from rest_framework.request import Request


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


class IsPerson(BasePermission):
    """A signed-in person (session or personal token), not an agent."""

    message = "This operation is for people, not agents."

    def has_permission(self, request: Request, view: object) -> bool:
        return bool(request.user and request.user.is_authenticated and not is_runner(request))


class IsRunner(BasePermission):
    """An agent, with a runner token."""

    message = "This operation is for agents, with a runner token."

    def has_permission(self, request: Request, view: object) -> bool:
        return is_runner(request)


class IsPersonOrReadOnly(BasePermission):
    """Anyone but agents may read; people write. Agents see only the job they hold."""

    message = "Agents read only the job they hold; people sign in to change jobs."

    def has_permission(self, request: Request, view: object) -> bool:
        if is_runner(request):
            return False
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return bool(request.user and request.user.is_authenticated)
