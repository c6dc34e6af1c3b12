"""The queue API. People create, list and cancel jobs; agents claim, heartbeat and finish them."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.pagination import CreatedCursorPagination
from benchhub.api.permissions import IsPerson, IsPersonOrReadOnly, IsRunner
from benchhub.hosts.authentication import request_runner_token
from benchhub.jobs import selectors, services
from benchhub.jobs.models import Job, JobSchedule
from benchhub.jobs.serializers import (
    ClaimInSerializer,
    FinishInSerializer,
    HeartbeatInSerializer,
    JobClaimOutSerializer,
    JobDetailOutSerializer,
    JobInSerializer,
    JobOutSerializer,
    ReleaseInSerializer,
    ScheduleInSerializer,
    ScheduleOutSerializer,
    StatusOutSerializer,
)


class JobsView(APIView):
    permission_classes = [IsPersonOrReadOnly]
    pagination_class = CreatedCursorPagination

    @extend_schema(
        parameters=[OpenApiParameter("state", str, required=False, enum=Job.State.values)],
        responses=JobOutSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        state = request.query_params.get("state")
        if state and state not in Job.State.values:
            return error_response(
                "invalid",
                "Unknown state.",
                400,
                {"state": [f"One of {', '.join(Job.State.values)}."]},
            )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.job_list(state=state), request, view=self)
        return paginator.get_paginated_response(JobOutSerializer(page, many=True).data)

    @extend_schema(request=JobInSerializer, responses={201: JobDetailOutSerializer})
    def post(self, request: Request) -> Response:
        data = JobInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = services.job_create(created_by=request.user, **data.validated_data)
        return Response(
            JobDetailOutSerializer(selectors.job_get(job_id=job.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class JobDetailView(APIView):
    permission_classes = [IsPersonOrReadOnly]

    @extend_schema(responses=JobDetailOutSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = selectors.job_get(job_id=job_id)
        if job is None:
            return error_response("not_found", f"No job {job_id}.", status.HTTP_404_NOT_FOUND)
        return Response(JobDetailOutSerializer(job).data)


class StatusView(APIView):
    """The queue at a glance, for pages that follow it live: counts per state, the jobs agents
    hold with their last progress, and which hosts' agents are online."""

    permission_classes = [IsPersonOrReadOnly]

    @extend_schema(responses=StatusOutSerializer)
    def get(self, request: Request) -> Response:
        return Response(StatusOutSerializer(selectors.queue_status()).data)


class JobCancelView(APIView):
    permission_classes = [IsPerson]

    @extend_schema(request=None, responses=JobDetailOutSerializer)
    def post(self, request: Request, job_id: int) -> Response:
        services.job_cancel(job_id=job_id, actor=request.user.get_username(), by=request.user)
        return Response(JobDetailOutSerializer(selectors.job_get(job_id=job_id)).data)


class JobClaimView(APIView):
    permission_classes = [IsRunner]

    @extend_schema(
        request=ClaimInSerializer,
        responses={200: JobClaimOutSerializer, 204: OpenApiResponse(description="no work")},
    )
    def post(self, request: Request) -> Response:
        body = ClaimInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        job = services.job_claim(
            token=request_runner_token(request),
            tablespaces=body.validated_data["tablespaces"],
            tags=body.validated_data.get("tags"),
        )
        if job is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        # The claimed job comes back with its host and creator: no second read.
        return Response(JobClaimOutSerializer(job).data)


class JobHeartbeatView(APIView):
    permission_classes = [IsRunner]

    @extend_schema(request=HeartbeatInSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, job_id: int) -> Response:
        data = HeartbeatInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reply = services.job_heartbeat(
            job_id=job_id, token=request_runner_token(request), **data.validated_data
        )
        return Response({"cancel": reply.cancel, "lease_expires_at": reply.lease_expires_at})


class JobFinishView(APIView):
    permission_classes = [IsRunner]

    @extend_schema(request=FinishInSerializer, responses=JobOutSerializer)
    def post(self, request: Request, job_id: int) -> Response:
        data = FinishInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = services.job_finish(
            job_id=job_id, token=request_runner_token(request), **data.validated_data
        )
        return Response(JobOutSerializer(selectors.job_get(job_id=job.pk)).data)


class JobReleaseView(APIView):
    permission_classes = [IsRunner]

    @extend_schema(request=ReleaseInSerializer, responses=JobOutSerializer)
    def post(self, request: Request, job_id: int) -> Response:
        data = ReleaseInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = services.job_release(
            job_id=job_id, token=request_runner_token(request), **data.validated_data
        )
        return Response(JobOutSerializer(selectors.job_get(job_id=job.pk)).data)


class SchedulesView(APIView):
    permission_classes = [IsPersonOrReadOnly]

    @extend_schema(responses=ScheduleOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        schedules = JobSchedule.objects.order_by("name")[:500]
        return Response(ScheduleOutSerializer(schedules, many=True).data)

    @extend_schema(request=ScheduleInSerializer, responses={201: ScheduleOutSerializer})
    def post(self, request: Request) -> Response:
        data = ScheduleInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        schedule = services.schedule_save(
            name=data.validated_data["name"],
            crontab=data.validated_data["crontab"],
            # As sent (host by name): validated again each time the schedule fires.
            template=data.initial_data["template"],
            enabled=data.validated_data["enabled"],
            file_set=data.validated_data["file_set"],
            created_by=request.user,
        )
        return Response(ScheduleOutSerializer(schedule).data, status=status.HTTP_201_CREATED)


class ScheduleDetailView(APIView):
    permission_classes = [IsPerson]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, schedule_id: int) -> Response:
        schedule = (
            JobSchedule.objects.filter(pk=schedule_id).select_related("periodic_task").first()
        )
        if schedule is None:
            return error_response("not_found", f"No schedule {schedule_id}.", 404)
        services.schedule_delete(schedule=schedule, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
