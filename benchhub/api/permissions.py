"""Who may do what through the API."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from benchhub.api.authentication import RunnerPrincipal


def is_runner(request: Request) -> bool:
    return isinstance(request.user, RunnerPrincipal)


class IsPerson(BasePermission):
    """A signed-in person (session or personal token), not an agent."""

    message = "This operation is for people, not agents."

    def has_permission(self, request: Request, view: object) -> bool:
        return bool(request.user and request.user.is_authenticated and not is_runner(request))
