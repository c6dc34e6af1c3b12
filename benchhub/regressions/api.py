"""The regressions API: list, detail and state change of detected changes; a person's
subscriptions, webhooks and delivery log. Reading regressions is open as the rest of the API;
changing a state takes staff (or regressions.change_regression); the rest is each person's own."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.pagination import EnvelopeCursorPagination
from benchhub.api.permissions import IsPerson, request_person
from benchhub.regressions import selectors, services
from benchhub.regressions.models import Regression
from benchhub.regressions.serializers import (
    AlertGroupOutSerializer,
    DeliveryOutSerializer,
    GroupQuerySerializer,
    RegressionDetailOutSerializer,
    RegressionOutSerializer,
    RegressionQuerySerializer,
    StateInSerializer,
    SubscriptionInSerializer,
    SubscriptionOutSerializer,
    WebhookInSerializer,
    WebhookOutSerializer,
)


class DetectedCursorPagination(EnvelopeCursorPagination):
    ordering = ("-detected_at", "-id")
    max_page_size = 200


def _regression(regression_id: int) -> Regression:
    regression = selectors.regression_get(regression_id=regression_id)
    if regression is None:
        raise Http404(f"No regression {regression_id}.")
    return regression


def _detail(regression: Regression) -> dict:
    events = selectors.regression_events(regression=regression)
    return RegressionDetailOutSerializer(regression, context={"events": events}).data


class RegressionsView(APIView):
    """GET detected changes, newest first (cursor-paginated); filters: state, kind, host,
    workload, clients, group (an alert group's id: its changes)."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    pagination_class = DetectedCursorPagination

    @extend_schema(
        parameters=[
            OpenApiParameter(name, int if name in ("clients", "group") else str, required=False)
            for name in ("state", "kind", "host", "workload", "clients", "group")
        ],
        responses=RegressionOutSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        query = RegressionQuerySerializer(
            data={k: v for k, v in request.query_params.items() if v != ""}
        )
        query.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        regressions = selectors.regression_list(filters=query.validated_data)
        page = paginator.paginate_queryset(regressions, request, view=self)
        return paginator.get_paginated_response(RegressionOutSerializer(page, many=True).data)


class UpdatedCursorPagination(EnvelopeCursorPagination):
    ordering = selectors.GROUP_ORDER
    max_page_size = 200


class AlertGroupsView(APIView):
    """GET alert groups (a host and commit range each, its changes across levels and
    workloads), the most recently changed first (cursor-paginated); filters: host, direction.
    A group's changes: GET /api/v1/regressions/?group=<id>."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    pagination_class = UpdatedCursorPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("host", str, required=False),
            OpenApiParameter("direction", str, required=False),
        ],
        responses=AlertGroupOutSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        query = GroupQuerySerializer(
            data={k: v for k, v in request.query_params.items() if v != ""}
        )
        query.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        groups = selectors.group_list(filters=query.validated_data)
        page = paginator.paginate_queryset(groups, request, view=self)
        return paginator.get_paginated_response(AlertGroupOutSerializer(page, many=True).data)


class RegressionDetailView(APIView):
    """GET one detected change with its state-change log."""

    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=RegressionDetailOutSerializer)
    def get(self, request: Request, regression_id: int) -> Response:
        return Response(_detail(_regression(regression_id)))


class RegressionStateView(APIView):
    """POST {state, note}: triage a change (staff, or regressions.change_regression)."""

    permission_classes = [IsPerson]

    @extend_schema(request=StateInSerializer, responses=RegressionDetailOutSerializer)
    def post(self, request: Request, regression_id: int) -> Response:
        body = StateInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        regression = services.regression_state_change(
            regression=_regression(regression_id),
            actor=request_person(request),
            **body.validated_data,
        )
        return Response(_detail(regression))


class SubscriptionsView(APIView):
    """GET my subscriptions; POST {host, workload} subscribes ("" or absent: every one)."""

    permission_classes = [IsPerson]

    @extend_schema(responses=SubscriptionOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        subscriptions = selectors.subscription_list(user=request_person(request))
        return Response(SubscriptionOutSerializer(subscriptions, many=True).data)

    @extend_schema(request=SubscriptionInSerializer, responses={201: SubscriptionOutSerializer})
    def post(self, request: Request) -> Response:
        body = SubscriptionInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        subscription = services.subscription_add(
            user=request_person(request),
            host_name=body.validated_data["host"],
            workload_name=body.validated_data["workload"],
        )
        return Response(
            SubscriptionOutSerializer(subscription).data, status=status.HTTP_201_CREATED
        )


class SubscriptionDetailView(APIView):
    """DELETE one of my subscriptions."""

    permission_classes = [IsPerson]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, subscription_id: int) -> Response:
        person = request_person(request)
        if not services.subscription_remove(user=person, subscription_id=subscription_id):
            return error_response("not_found", f"No subscription {subscription_id}.", 404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhooksView(APIView):
    """GET my webhooks (with their secrets); POST {url} adds one with a new secret."""

    permission_classes = [IsPerson]

    @extend_schema(responses=WebhookOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        webhooks = selectors.webhook_list(user=request_person(request))
        return Response(WebhookOutSerializer(webhooks, many=True).data)

    @extend_schema(request=WebhookInSerializer, responses={201: WebhookOutSerializer})
    def post(self, request: Request) -> Response:
        body = WebhookInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        webhook = services.webhook_add(user=request_person(request), url=body.validated_data["url"])
        return Response(WebhookOutSerializer(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailView(APIView):
    """DELETE one of my webhooks."""

    permission_classes = [IsPerson]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, webhook_id: int) -> Response:
        if not services.webhook_remove(user=request_person(request), webhook_id=webhook_id):
            return error_response("not_found", f"No webhook {webhook_id}.", 404)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliveriesView(APIView):
    """GET my delivery log (emails and webhook calls), newest first, the latest 100."""

    permission_classes = [IsPerson]

    @extend_schema(responses=DeliveryOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        deliveries = selectors.delivery_list(user=request_person(request))
        return Response(DeliveryOutSerializer(deliveries, many=True).data)
