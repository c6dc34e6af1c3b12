from django.contrib import admin

from benchhub.workloads.models import Workload


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "builtin", "query_mode", "created_at"]
    list_filter = ["builtin", "query_mode"]
    search_fields = ["name"]
    readonly_fields = ["definition_hash"]
