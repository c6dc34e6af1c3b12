from django.contrib import admin

from benchhub.hosts.models import Host, HostFacts, RunnerToken


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    list_display = ["name", "tags", "last_seen_at", "created_at"]
    search_fields = ["name"]
    raw_id_fields = ["current_facts"]


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
    readonly_fields = ["prefix", "digest", "created_at", "last_used_at"]
    list_select_related = ["host"]
