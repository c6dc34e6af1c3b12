from django.contrib import admin

from benchhub.jobs.models import Job, JobEvent, JobSchedule


class JobEventInline(admin.TabularInline):
    model = JobEvent
    readonly_fields = ("at", "kind", "attempt", "actor", "message")
    fields = readonly_fields
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "state",
        "versions",
        "priority",
        "host",
        "attempt",
        "created_at",
        "finished_at",
    ]
    list_filter = ["state"]
    list_select_related = ["host"]
    raw_id_fields = ["host", "claimed_by", "claimed_host", "created_by", "schedule"]
    inlines = [JobEventInline]


@admin.register(JobEvent)
class JobEventAdmin(admin.ModelAdmin):
    list_display = ["job", "at", "kind", "attempt", "actor"]
    list_filter = ["kind"]
    raw_id_fields = ["job"]


@admin.register(JobSchedule)
class JobScheduleAdmin(admin.ModelAdmin):
    list_display = ["name", "crontab", "enabled", "created_at"]
    raw_id_fields = ["created_by", "periodic_task"]
