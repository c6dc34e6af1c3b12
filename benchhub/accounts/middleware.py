"""A private instance: anonymous visitors see the sign-in page and /healthz, nothing else."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# The API and its schema decide for themselves (api.authentication.PrivateInstanceAuthentication),
# because a bearer token is only known to DRF; the admin sends anonymous visitors to its own
# sign-in page. The interactive API docs (/api/docs/) are a page like the others.
OPEN_PREFIXES = ("/healthz", "/accounts/login/", "/admin/", "/api/v1/", "/api/schema/", "/static/")


class PrivateInstanceMiddleware:
    """With settings.PRIVATE, send anonymous visitors of every page to the sign-in page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            settings.PRIVATE
            and not request.user.is_authenticated
            and not request.path.startswith(OPEN_PREFIXES)
        ):
            return redirect_to_login(request.get_full_path())
        return self.get_response(request)
