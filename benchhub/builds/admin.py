from django.contrib import admin

from benchhub.builds.models import Build


@admin.register(Build)
class BuildAdmin(admin.ModelAdmin):
    list_display = ["version", "major", "stage", "commit", "origin", "configure_flags"]
    list_filter = ["major", "origin", "stage"]
    search_fields = ["version", "commit"]
