"""The bisection API: people start, list, show and cancel bisections; the agent of a listing
job sends the range it found."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.pagination import CreatedCursorPagination
from benchhub.api.permissions import IsPerson, IsPersonOrReadOnly, IsRunner
from benchhub.bisections import selectors, services
from benchhub.bisections.serializers import (
    BisectionDetailOutSerializer,
    BisectionInSerializer,
    BisectionOutSerializer,
    RangeInSerializer,
)
from benchhub.hosts.authentication import request_runner_token


class BisectionsView(APIView):
    permission_classes = [IsPersonOrReadOnly]
    pagination_class = CreatedCursorPagination

    @extend_schema(responses=BisectionOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.bisection_list(), request, view=self)
        return paginator.get_paginated_response(BisectionOutSerializer(page, many=True).data)

    @extend_schema(request=BisectionInSerializer, responses={201: BisectionDetailOutSerializer})
    def post(self, request: Request) -> Response:
        data = BisectionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        found = data.validated_data
        bisection = services.bisection_start(found, created_by=request.user)
        return Response(
            BisectionDetailOutSerializer(selectors.bisection_get(bisection_id=bisection.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class BisectionDetailView(APIView):
    permission_classes = [IsPersonOrReadOnly]

    @extend_schema(responses=BisectionDetailOutSerializer)
    def get(self, request: Request, bisection_id: int) -> Response:
        bisection = selectors.bisection_get(bisection_id=bisection_id)
        if bisection is None:
            return error_response("not_found", f"No bisection {bisection_id}.", 404)
        return Response(BisectionDetailOutSerializer(bisection).data)


class BisectionCancelView(APIView):
    permission_classes = [IsPerson]

    @extend_schema(request=None, responses=BisectionDetailOutSerializer)
    def post(self, request: Request, bisection_id: int) -> Response:
        services.bisection_cancel(
            bisection_id=bisection_id, actor=request.user.get_username(), by=request.user
        )
        bisection = selectors.bisection_get(bisection_id=bisection_id)
        return Response(BisectionDetailOutSerializer(bisection).data)


class JobRangeView(APIView):
    """`POST /api/v1/jobs/<id>/range/`: the range a bisection's listing job found."""

    permission_classes = [IsRunner]

    @extend_schema(request=RangeInSerializer, responses={201: BisectionOutSerializer})
    def post(self, request: Request, job_id: int) -> Response:
        data = RangeInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bisection = services.bisection_range_store(
            job_id=job_id, token=request_runner_token(request), **data.validated_data
        )
        return Response(BisectionOutSerializer(bisection).data, status=status.HTTP_201_CREATED)
