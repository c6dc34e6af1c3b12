from django.contrib import admin

from benchhub.review.models import Comment, ReviewEvent, RunTag, Tag


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ["id", "author", "run", "comparison_key", "created_at", "edited_at"]
    list_select_related = ["author", "run"]
    raw_id_fields = ["author", "run"]
    search_fields = ["body", "comparison_key", "author__username"]
    date_hierarchy = "created_at"


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


@admin.register(RunTag)
class RunTagAdmin(admin.ModelAdmin):
    list_display = ["run", "tag", "added_by", "added_at"]
    list_select_related = ["run", "tag", "added_by"]
    raw_id_fields = ["run", "added_by"]
    list_filter = ["tag"]


@admin.register(ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    list_display = ["at", "actor", "verb", "run", "comparison_key", "detail"]
    list_select_related = ["actor", "run"]
    list_filter = ["verb"]
    raw_id_fields = ["actor", "run"]
    date_hierarchy = "at"
    readonly_fields = ["actor", "verb", "run", "comparison_key", "detail", "at"]
