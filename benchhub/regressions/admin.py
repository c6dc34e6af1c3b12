from django.contrib import admin

from benchhub.regressions.models import (
    Delivery,
    Regression,
    RegressionEvent,
    Subscription,
    Webhook,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shown, never edited here: detection writes these rows, and a state changes only through
    the triage page or API so that every change is in the log."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Regression)
class RegressionAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "state", "host", "workload", "clients", "change", "detected_at"]
    list_select_related = ["host", "workload"]
    list_filter = ["kind", "state"]
    raw_id_fields = ["run_before", "run_after", "baseline_run", "state_changed_by"]
    date_hierarchy = "detected_at"


@admin.register(RegressionEvent)
class RegressionEventAdmin(ReadOnlyAdmin):
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
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "channel", "recipient", "status", "attempts", "response_status"]
    list_filter = ["channel", "status"]
    raw_id_fields = ["notice", "user", "webhook"]
