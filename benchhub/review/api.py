"""The review API: threads, tags, marks and the event log. People only: agents get 403."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.pagination import EnvelopeCursorPagination
from benchhub.api.permissions import IsPerson
from benchhub.results.models import Run
from benchhub.results.selectors import run_get
from benchhub.review import selectors, services
from benchhub.review.keys import comparison_key
from benchhub.review.serializers import (
    CommentInSerializer,
    CommentOutSerializer,
    ComparisonCommentInSerializer,
    MarkInSerializer,
    ReviewEventOutSerializer,
    RunTagOutSerializer,
    TagInSerializer,
)


class EventCursorPagination(EnvelopeCursorPagination):
    ordering = ("-at", "-id")
    max_page_size = 200


def _run(run_uuid) -> Run:
    run = run_get(run_uuid=run_uuid)
    if run is None:
        raise Http404(f"No run {run_uuid}.")
    return run


class RunCommentsView(APIView):
    """GET a run's thread (oldest first); POST adds a comment."""

    permission_classes = [IsPerson]

    @extend_schema(responses=CommentOutSerializer(many=True))
    def get(self, request: Request, run_uuid) -> Response:
        comments = selectors.comment_list(run=_run(run_uuid))
        return Response(CommentOutSerializer(comments, many=True).data)

    @extend_schema(request=CommentInSerializer, responses={201: CommentOutSerializer})
    def post(self, request: Request, run_uuid) -> Response:
        body = CommentInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        comment = services.comment_add(
            author=request.user, body=body.validated_data["body"], run=_run(run_uuid)
        )
        return Response(CommentOutSerializer(comment).data, status=status.HTTP_201_CREATED)


KEY_PARAMETER = OpenApiParameter(
    "key", str, description="the compare permalink or its query string", required=True
)


class ComparisonCommentsView(APIView):
    """GET the thread of a comparison (?key=<permalink query>); POST adds a comment."""

    permission_classes = [IsPerson]

    @extend_schema(parameters=[KEY_PARAMETER], responses=CommentOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        key = comparison_key(request.query_params.get("key", ""))
        comments = selectors.comment_list(comparison_key=key)
        return Response(CommentOutSerializer(comments, many=True).data)

    @extend_schema(request=ComparisonCommentInSerializer, responses={201: CommentOutSerializer})
    def post(self, request: Request) -> Response:
        body = ComparisonCommentInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        key = comparison_key(body.validated_data["key"])
        comment = services.comment_add(
            author=request.user, body=body.validated_data["body"], comparison_key=key
        )
        return Response(CommentOutSerializer(comment).data, status=status.HTTP_201_CREATED)


class RunTagsView(APIView):
    """GET a run's tags; POST adds one (created on first use)."""

    permission_classes = [IsPerson]

    @extend_schema(responses=RunTagOutSerializer(many=True))
    def get(self, request: Request, run_uuid) -> Response:
        tags = selectors.run_tag_list(run=_run(run_uuid))
        return Response(RunTagOutSerializer(tags, many=True).data)

    @extend_schema(request=TagInSerializer, responses={201: RunTagOutSerializer})
    def post(self, request: Request, run_uuid) -> Response:
        body = TagInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        run_tag = services.run_tag_add(
            run=_run(run_uuid), name=body.validated_data["name"], actor=request.user
        )
        return Response(RunTagOutSerializer(run_tag).data, status=status.HTTP_201_CREATED)


class RunTagView(APIView):
    """DELETE removes a tag from a run."""

    permission_classes = [IsPerson]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, run_uuid, name: str) -> Response:
        if not services.run_tag_remove(run=_run(run_uuid), name=name, actor=request.user):
            return error_response("not_found", f"The run has no tag {name}.", 404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunMarksView(APIView):
    """POST sets or clears the baseline and invalid marks of a run."""

    permission_classes = [IsPerson]

    @extend_schema(request=MarkInSerializer, responses={200: None})
    def post(self, request: Request, run_uuid) -> Response:
        body = MarkInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        run = services.run_mark(run=_run(run_uuid), actor=request.user, **body.validated_data)
        return Response({"run": str(run.uuid), "baseline": run.baseline, "invalid": run.invalid})


class EventQuerySerializer(serializers.Serializer):
    run = serializers.UUIDField(
        allow_null=True, error_messages={"invalid": "'{value}' is not a run UUID."}
    )


class ReviewEventsView(APIView):
    """GET the review log, newest first (cursor-paginated); ?run=<uuid> for one run."""

    permission_classes = [IsPerson]
    pagination_class = EventCursorPagination

    @extend_schema(
        parameters=[OpenApiParameter("run", str, required=False)],
        responses=ReviewEventOutSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        # An empty ?run= asks for every run's events, as no ?run= does.
        query = EventQuerySerializer(data={"run": request.query_params.get("run") or None})
        query.is_valid(raise_exception=True)
        run_uuid = query.validated_data["run"]
        events = selectors.event_list(run=_run(run_uuid) if run_uuid else None)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(ReviewEventOutSerializer(page, many=True).data)
