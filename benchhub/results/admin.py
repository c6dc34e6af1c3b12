from django.contrib import admin

from benchhub.results.models import DetailPruning, LevelAggregate, Result, Run


class ResultInline(admin.TabularInline):
    model = Result
    readonly_fields = ("clients", "repeat", "threads", "tps", "latency_avg_ms", "aborted")
    fields = readonly_fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["uuid", "host", "build", "workload", "scale", "status", "source", "started_at"]
    list_filter = ["status", "source", "host"]
    list_select_related = ["host", "build", "workload"]
    search_fields = ["uuid", "host__name", "build__version", "workload__name"]
    raw_id_fields = [
        "host",
        "host_facts",
        "build",
        "config",
        "workload",
        "submitted_by_runner",
        "submitted_by",
    ]
    inlines = [ResultInline]
    date_hierarchy = "started_at"


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["run", "clients", "repeat", "tps", "latency_avg_ms", "aborted"]
    list_filter = ["aborted"]
    raw_id_fields = ["run"]
    list_select_related = ["run"]


@admin.register(DetailPruning)
class DetailPruningAdmin(admin.ModelAdmin):
    list_display = ["month", "parts", "pruned_at"]


@admin.register(LevelAggregate)
class LevelAggregateAdmin(admin.ModelAdmin):
    list_display = ["run", "clients", "samples", "aborted", "tps_median", "tps_stddev"]
    raw_id_fields = ["run", "host", "build", "workload"]
    list_select_related = ["run"]
