from django.contrib import admin

from benchhub.accounts.models import PersonalToken


@admin.register(PersonalToken)
class PersonalTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "user",
        "prefix",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    list_filter = ["revoked_at"]
    readonly_fields = ["prefix", "digest", "created_at", "last_used_at"]
    search_fields = ["name", "prefix", "user__username"]
