"""The API's one error shape, and its one exception handler.

Every error body is `{"error": <code>, "detail": <sentence>, "fields": {<path>: [<message>]}}`,
plus the keys of a refusal's `extra` (an incomplete import adds `read`).
`fields` is present for validation errors and names each bad field by its path in the request,
e.g. `results[2].tps` or `host.facts.sockets`. The domain's refusals (benchhub.errors.
ApplicationError) carry their code, status and field; views let them through and this handler
renders them, so no view translates errors to statuses.
"""

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import DataError, IntegrityError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from benchhub.errors import ApplicationError

logger = logging.getLogger(__name__)


def _join(prefix: str, key: str) -> str:
    if key == "non_field_errors":
        return prefix
    if key.isdigit():  # list items: DRF keys their errors by index
        return f"{prefix}[{key}]"
    if not prefix or key.startswith("["):
        return f"{prefix}{key}"
    return f"{prefix}.{key}"


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as {dotted/indexed path: [messages]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = _join(prefix, str(key))
            for p, msgs in flatten_errors(value, path).items():
                flat.setdefault(p, []).extend(msgs)
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            flat[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                if item:
                    flat.update(flatten_errors(item, f"{prefix}[{index}]"))
    else:
        flat[prefix or "non_field_errors"] = [str(detail)]
    return flat


def error_response(
    code: str,
    detail: str,
    status_code: int,
    fields: dict | None = None,
    extra: dict[str, Any] | None = None,
) -> Response:
    body: dict[str, Any] = {**(extra or {}), "error": code, "detail": detail}
    if fields:
        body["fields"] = fields
    return Response(body, status=status_code)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ApplicationError):
        set_rollback()  # as DRF does for its own exceptions, should requests ever be atomic
        return error_response(exc.code, exc.detail, exc.status, exc.fields, exc.extra)
    if isinstance(exc, (DataError, IntegrityError)):
        # The safety net under the serializers: input they should have refused reached the
        # database. It is the caller's bad input (400), never an outage, and it is logged so the
        # field gets its own check at the edge.
        set_rollback()
        logger.warning("database refused a request's data: %s", exc)
        return error_response(
            "invalid",
            "The database refused a value in the request: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}",
            status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, RequestDataTooBig):
        return error_response("too_large", "The request body exceeds the size limit.", 413)
    if isinstance(exc, exceptions.ValidationError):
        return error_response(
            "invalid",
            "The request has invalid fields.",
            status.HTTP_400_BAD_REQUEST,
            flatten_errors(exc.detail),
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data.get("detail", "") if isinstance(response.data, dict) else response.data
    code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
    response.data = {"error": code, "detail": str(detail)}
    return response
