from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from benchhub.hosts.models import Host, HostFacts, HostGrant, RunnerToken
from benchhub.hosts.services import runner_tokens_revoke_ids


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    list_display = ["name", "tags", "last_seen_at", "created_at"]
    search_fields = ["name"]
    raw_id_fields = ["current_facts"]
    filter_horizontal = ["owners"]


@admin.register(HostGrant)
class HostGrantAdmin(admin.ModelAdmin):
    """Who may run jobs where, besides staff and each host's owners (hosts.access)."""

    list_display = ["host", "tag", "user", "group", "granted_by", "granted_at"]
    list_select_related = ["host", "user", "group", "granted_by"]
    raw_id_fields = ["host", "user"]
    readonly_fields = ["granted_by", "granted_at"]

    def save_model(self, request: HttpRequest, obj: HostGrant, form: object, change: bool) -> None:
        if not change:
            obj.granted_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)


@admin.register(HostFacts)
class HostFactsAdmin(admin.ModelAdmin):
    list_display = ["host", "captured_at", "cpu_model", "cores", "memory_bytes", "fingerprint"]
    list_filter = ["host"]
    list_select_related = ["host"]


@admin.register(RunnerToken)
class RunnerTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "host",
        "prefix",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    readonly_fields = ["host", "prefix", "digest", "created_at", "last_used_at"]
    list_select_related = ["host"]
    list_filter = ["revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tokens are issued by `manage.py runner_create HOST`, which prints the secret once; an
        # add form here would store a token without one. The host is read-only for the same
        # reason a token is bound to one host: moving it would let an agent speak for another.
        return False

    @admin.action(description="Revoke the selected tokens now")
    def revoke(self, request: HttpRequest, queryset: QuerySet[RunnerToken]) -> None:
        count = runner_tokens_revoke_ids(token_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Revoked {count} token(s).")
