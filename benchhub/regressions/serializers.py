"""Validation of regression requests, and the shapes of regressions, subscriptions, webhooks and
deliveries."""

from typing import Any

from rest_framework import serializers

from benchhub.api.fields import StrictCharField
from benchhub.api.serializers import InSerializer
from benchhub.regressions.models import (
    MAX_NOTE,
    MAX_WEBHOOK_URL,
    AlertGroup,
    Delivery,
    Regression,
    RegressionEvent,
    Subscription,
    Webhook,
)


class RegressionQuerySerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=Regression.State.choices, required=False)
    kind = serializers.ChoiceField(choices=Regression.Kind.choices, required=False)
    host = serializers.CharField(max_length=200, required=False)
    workload = serializers.CharField(max_length=200, required=False)
    clients = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False)
    group = serializers.IntegerField(min_value=1, required=False)


class StateInSerializer(InSerializer):
    state = serializers.ChoiceField(choices=Regression.State.choices)
    note = StrictCharField(max_length=MAX_NOTE, required=False, allow_blank=True, default="")


class RunRefSerializer(serializers.Serializer):
    uuid = serializers.UUIDField()
    version = serializers.CharField(source="build.version")
    started_at = serializers.DateTimeField()


class GroupRefSerializer(serializers.Serializer):
    """The alert a change is filed under: its host and commit range, across levels and
    workloads (regressions.grouping)."""

    id = serializers.IntegerField()
    direction = serializers.CharField()
    members = serializers.IntegerField()
    worst_change = serializers.FloatField()


class RegressionOutSerializer(serializers.ModelSerializer):
    host = serializers.CharField(source="host.name")
    group = GroupRefSerializer(allow_null=True)
    workload = serializers.CharField(source="workload.name")
    run_before = RunRefSerializer()
    run_after = RunRefSerializer()
    baseline_run = serializers.UUIDField(source="baseline_run.uuid", allow_null=True, default=None)
    state_changed_by = serializers.CharField(
        source="state_changed_by.username", allow_null=True, default=None
    )

    class Meta:
        model = Regression
        fields = [
            "id",
            "kind",
            "state",
            "note",
            "host",
            "workload",
            "clients",
            "comparability_key",
            "run_before",
            "run_after",
            "baseline_run",
            "before_tps",
            "after_tps",
            "before_runs",
            "after_runs",
            "change",
            "change_low",
            "change_high",
            "p_value",
            "detections",
            "per_week",
            "detected_at",
            "state_changed_at",
            "state_changed_by",
            "group",
        ]


class RegressionEventOutSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)

    class Meta:
        model = RegressionEvent
        fields = ["at", "actor", "from_state", "to_state", "note"]


class RegressionDetailOutSerializer(RegressionOutSerializer):
    events = serializers.SerializerMethodField(help_text="the state-change log, newest first")

    class Meta(RegressionOutSerializer.Meta):
        fields = [*RegressionOutSerializer.Meta.fields, "events"]

    def get_events(self, regression: Regression) -> Any:
        return RegressionEventOutSerializer(self.context["events"], many=True).data


class SubscriptionInSerializer(InSerializer):
    host = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    workload = StrictCharField(max_length=200, required=False, allow_blank=True, default="")


class SubscriptionOutSerializer(serializers.ModelSerializer):
    host = serializers.CharField(source="host_name", help_text='"" for every host')
    workload = serializers.CharField(source="workload_name", help_text='"" for every workload')

    class Meta:
        model = Subscription
        fields = ["id", "host", "workload", "created_at"]


class WebhookInSerializer(InSerializer):
    # A plain string: the service checks scheme, host and length and names the field.
    url = StrictCharField(max_length=MAX_WEBHOOK_URL)


class WebhookOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = Webhook
        fields = ["id", "url", "secret", "created_at"]


class DeliveryOutSerializer(serializers.ModelSerializer):
    notice = serializers.IntegerField(source="notice_id")
    group = serializers.IntegerField(
        source="notice.group_id", allow_null=True, help_text="the alert group; null for a drift"
    )
    regressions = serializers.SerializerMethodField(help_text="the changes the notice named")
    webhook = serializers.IntegerField(source="webhook_id", allow_null=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "notice",
            "group",
            "regressions",
            "channel",
            "webhook",
            "recipient",
            "status",
            "attempts",
            "response_status",
            "error",
            "created_at",
            "attempted_at",
            "delivered_at",
        ]

    def get_regressions(self, delivery: Delivery) -> list[int]:
        return sorted(member.pk for member in delivery.notice.members.all())


class GroupQuerySerializer(serializers.Serializer):
    host = serializers.CharField(max_length=200, required=False)
    direction = serializers.ChoiceField(choices=AlertGroup.Direction.choices, required=False)


class BuildRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.CharField()


class AlertGroupOutSerializer(serializers.ModelSerializer):
    """An alert as people triage it: one host and commit range, its changes across levels and
    workloads (listed by GET /api/v1/regressions/?group=<id>)."""

    host = serializers.CharField(source="host.name")
    build_before = BuildRefSerializer()
    build_after = BuildRefSerializer()
    untriaged = serializers.IntegerField(help_text="changes still `new`")

    class Meta:
        model = AlertGroup
        fields = [
            "id",
            "host",
            "build_before",
            "build_after",
            "direction",
            "members",
            "untriaged",
            "worst_change",
            "created_at",
            "updated_at",
        ]
