"""Django's own 404 and 500 pages, in the API's error shape under /api/.

A URL the API's patterns don't match (`/api/v1/jobs/-1/`, `/api/v1/nothing/`) never reaches DRF,
so its exception handler cannot shape the answer; these handlers do, and leave the HTML pages
to everything else.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _api(request):
        return JsonResponse(
            {"error": "not_found", "detail": f"No API resource at {request.path}."}, status=404
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _api(request):
        return JsonResponse(
            {"error": "server_error", "detail": "The server failed; the error is logged."},
            status=500,
        )
    return defaults.server_error(request)
