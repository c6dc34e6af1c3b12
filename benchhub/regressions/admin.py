from django.contrib import admin

from benchhub.regressions.models import (
    Delivery,
    Regression,
    RegressionEvent,
    Subscription,
    Webhook,
)


@admin.register(Regression)
class RegressionAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "state", "host", "workload", "clients", "change", "detected_at"]
    list_select_related = ["host", "workload"]
    list_filter = ["kind", "state"]
    raw_id_fields = ["run_before", "run_after", "baseline_run", "state_changed_by"]
    date_hierarchy = "detected_at"


@admin.register(RegressionEvent)
class RegressionEventAdmin(admin.ModelAdmin):
    list_display = ["at", "regression", "actor", "from_state", "to_state", "note"]
    list_select_related = ["actor", "regression"]
    raw_id_fields = ["regression", "actor"]
    readonly_fields = ["regression", "actor", "from_state", "to_state", "note", "at"]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["user", "host_name", "workload_name", "created_at"]
    list_select_related = ["user"]
    raw_id_fields = ["user"]


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["id", "user", "url", "created_at"]
    list_select_related = ["user"]
    raw_id_fields = ["user"]
    exclude = ["secret"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "channel", "recipient", "status", "attempts", "response_status"]
    list_filter = ["channel", "status"]
    raw_id_fields = ["regression", "user", "webhook"]
