from django.contrib import admin

from benchhub.bisections.models import Bisection, BisectionCommit


class BisectionCommitInline(admin.TabularInline):
    model = BisectionCommit
    extra = 0
    fields = ("position", "sha", "subject", "verdict", "tps", "low", "high", "repeats", "step")
    readonly_fields = fields
    can_delete = False


@admin.register(Bisection)
class BisectionAdmin(admin.ModelAdmin):
    list_display = ["id", "recipe", "good_ref", "bad_ref", "host", "clients", "state", "culprit"]
    list_filter = ["state"]
    list_select_related = ["recipe", "host"]
    raw_id_fields = ["recipe", "host", "created_by"]
    inlines = [BisectionCommitInline]
