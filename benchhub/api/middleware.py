"""Refuse bodies over the size limit before anything reads them."""

import json
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class RequestSizeLimitMiddleware:
    """413 with the API's error shape when Content-Length exceeds settings.MAX_UPLOAD_BYTES.

    A body sent without Content-Length (chunked) is caught later, when Django reads more than
    DATA_UPLOAD_MAX_MEMORY_SIZE, by api.errors.exception_handler.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_UPLOAD_BYTES:
            body = {
                "error": "too_large",
                "detail": f"The request body ({length} bytes) exceeds the limit of "
                f"{settings.MAX_UPLOAD_BYTES} bytes.",
            }
            return HttpResponse(json.dumps(body), status=413, content_type="application/json")
        return self.get_response(request)
