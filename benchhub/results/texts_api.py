"""The whole of a run's stored texts, as plain text: what the run page and the run's API answer
show only the head of (excerpts.py). Read as the run itself is read (public instance: anyone;
private: signed in or a token).

Without parameters an answer is the whole text, a download (at most the upload's bounds: 10 MB
of an import's text, 5 MB of a raw output). With `offset` or `limit` it is a page of it: at most
TEXT_PAGE_MAX characters from `offset`, cut in the database, with the whole text's length in
`X-Total-Chars` and the next page in a `Link: <…>; rel="next"` header (none after the last).
"""

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.results.excerpts import IMPORT_TEXTS, RESULT_OUTPUTS, text_window
from benchhub.results.models import Result, Run, RunImportText

# Characters a page of a text holds at most: up to 4 MB of UTF-8, tens of ms to send.
TEXT_PAGE_MAX = 1_000_000

TEXT_PAGE_PARAMETERS = [
    OpenApiParameter("offset", int, description="a page from this character on (0 first)"),
    OpenApiParameter("limit", int, description=f"characters a page, at most {TEXT_PAGE_MAX}"),
]


class TextPageInSerializer(serializers.Serializer):
    """A page's query parameters; a bad one is a 400 naming it."""

    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=TEXT_PAGE_MAX, default=TEXT_PAGE_MAX)


def _text_response(text: str, *, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    # A download, never a page of this origin (the text is what a person pasted).
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _paged(request: Request) -> bool:
    return "offset" in request.query_params or "limit" in request.query_params


def _page_response(
    request: Request, *, source: tuple[str, str], owner_id: int, filename: str, missing: str
) -> HttpResponse:
    page = TextPageInSerializer(data=request.query_params)
    page.is_valid(raise_exception=True)
    offset, limit = page.validated_data["offset"], page.validated_data["limit"]
    window = text_window(source=source, owner_id=owner_id, offset=offset, limit=limit)
    if window is None or not window.total_chars:
        return error_response("not_found", missing, status.HTTP_404_NOT_FOUND)
    response = _text_response(window.head, filename=filename)
    response["X-Total-Chars"] = str(window.total_chars)
    if offset + limit < window.total_chars:
        after = replace_query_param(request.build_absolute_uri(), "offset", offset + limit)
        response["Link"] = f'<{after}>; rel="next"'
    return response


class RunImportTextView(APIView):
    """GET: the text an imported run was read from, whole or a page of it; 404 for a run an
    agent sent, or once retention dropped it."""

    @extend_schema(
        parameters=TEXT_PAGE_PARAMETERS,
        responses={(200, "text/plain"): OpenApiResponse(description="the text")},
    )
    def get(self, request: Request, run_uuid: str) -> HttpResponse:
        message = f"No imported text of run {run_uuid}."
        filename = f"import-{run_uuid}.txt"
        if _paged(request):
            run_id = Run.objects.filter(uuid=run_uuid).values_list("pk", flat=True).first()
            if run_id is None:
                return error_response("not_found", message, status.HTTP_404_NOT_FOUND)
            return _page_response(
                request, source=IMPORT_TEXTS, owner_id=run_id, filename=filename, missing=message
            )
        row = RunImportText.objects.filter(run__uuid=run_uuid).only("text").first()
        if row is None:
            return error_response("not_found", message, status.HTTP_404_NOT_FOUND)
        return _text_response(row.text, filename=filename)


class ResultOutputView(APIView):
    """GET: what pgbench printed for one result of the run, whole or a page of it; 404 when it
    printed nothing, or once retention dropped it."""

    @extend_schema(
        parameters=TEXT_PAGE_PARAMETERS,
        responses={(200, "text/plain"): OpenApiResponse(description="the output")},
    )
    def get(self, request: Request, run_uuid: str, result_id: int) -> HttpResponse:
        message = f"No output of result {result_id} in run {run_uuid}."
        filename = f"output-{run_uuid}-{result_id}.txt"
        if _paged(request):
            if not Result.objects.filter(run__uuid=run_uuid, pk=result_id).exists():
                return error_response("not_found", message, status.HTTP_404_NOT_FOUND)
            return _page_response(
                request,
                source=RESULT_OUTPUTS,
                owner_id=result_id,
                filename=filename,
                missing=message,
            )
        result = (
            Result.objects.select_related("output").filter(run__uuid=run_uuid, pk=result_id).first()
        )
        text = result.raw_output if result is not None else ""
        if not text:
            return error_response("not_found", message, status.HTTP_404_NOT_FOUND)
        return _text_response(text, filename=filename)


__all__ = ["ResultOutputView", "RunImportTextView"]
