from django.contrib import admin
from django.http import HttpRequest

from benchhub.accounts.forms import AdminLoginForm
from benchhub.accounts.models import PersonalToken

# The admin's sign-in page counts failures like the site's (accounts.ratelimit).
admin.site.login_form = AdminLoginForm


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

    def has_add_permission(self, request: HttpRequest) -> bool:
        # People create their own tokens (POST /api/v1/tokens/), which shows the secret once; an
        # add form here would store a token without one. Staff revoke by setting revoked_at.
        return False
