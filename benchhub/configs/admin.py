from django.contrib import admin

from benchhub.configs.models import ServerConfig


@admin.register(ServerConfig)
class ServerConfigAdmin(admin.ModelAdmin):
    list_display = ["hash", "created_at"]
    search_fields = ["hash"]
    readonly_fields = ["hash", "created_at"]
