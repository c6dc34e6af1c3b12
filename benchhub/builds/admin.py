from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from benchhub.builds.models import Build, Patch, Recipe


@admin.register(Build)
class BuildAdmin(admin.ModelAdmin):
    list_display = ["version", "major", "stage", "commit", "origin", "configure_flags", "recipe"]
    list_filter = ["major", "origin", "stage"]
    search_fields = ["version", "commit", "input_key"]
    readonly_fields = ["input_key", "provenance", "sort_key"]


class PatchInline(admin.TabularInline):
    model = Patch
    fields = ("position", "name", "sha256", "size", "uploaded_by", "uploaded_at")
    readonly_fields = ("position", "name", "sha256", "size", "uploaded_by", "uploaded_at")
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Patches are uploaded through the API or the recipes page, which check and digest them.
        return False


@admin.register(Recipe)
class RecipeAdmin(admin.ModelAdmin):
    list_display = ["name", "base", "source_kind", "created_by", "created_at"]
    list_filter = ["source_kind"]
    search_fields = ["name", "base", "url", "ref"]
    # Recipes are defined through the API or the recipes page, which check them the agent's way;
    # the admin views and deletes them, and edits only their description.
    readonly_fields = [
        "name", "base", "source_kind", "release", "url", "path", "sha256", "ref", "branch",
        "snapshot_date", "configure_flags", "cflags", "contrib", "sort_key", "created_by",
        "created_at",
    ]  # fmt: skip
    inlines = [PatchInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
