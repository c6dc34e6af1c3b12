"""Validation of review requests and the shapes of comments, tags and events."""

from rest_framework import serializers

from benchhub.api.fields import StrictCharField
from benchhub.api.serializers import InSerializer
from benchhub.review.markdown import markdown_render
from benchhub.review.models import Comment, ReviewEvent, RunTag
from benchhub.review.services import MAX_BODY


class CommentInSerializer(InSerializer):
    body = StrictCharField(max_length=MAX_BODY)


class ComparisonCommentInSerializer(CommentInSerializer):
    key = StrictCharField(max_length=2000, help_text="the compare permalink or its query string")


class TagInSerializer(InSerializer):
    name = StrictCharField(max_length=50)


class MarkInSerializer(InSerializer):
    baseline = serializers.BooleanField(required=False, allow_null=True, default=None)
    invalid = serializers.BooleanField(required=False, allow_null=True, default=None)
    unsteady_explained = serializers.BooleanField(required=False, allow_null=True, default=None)
    reason = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")

    def validate(self, attrs):
        if all(attrs[name] is None for name in ("baseline", "invalid", "unsteady_explained")):
            raise serializers.ValidationError(
                {"baseline": "Give baseline, invalid and/or unsteady_explained."}
            )
        return attrs


class CommentOutSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username")
    run = serializers.UUIDField(source="run.uuid", allow_null=True, default=None)
    html = serializers.SerializerMethodField(help_text="the body rendered and sanitised")

    class Meta:
        model = Comment
        fields = [
            "id",
            "author",
            "run",
            "comparison_key",
            "body",
            "html",
            "created_at",
            "edited_at",
        ]

    def get_html(self, comment: Comment) -> str:
        return markdown_render(comment.body)


class RunTagOutSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="tag.name")
    added_by = serializers.CharField(source="added_by.username", allow_null=True, default=None)

    class Meta:
        model = RunTag
        fields = ["name", "added_by", "added_at"]


class ReviewEventOutSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    run = serializers.UUIDField(source="run.uuid", allow_null=True, default=None)

    class Meta:
        model = ReviewEvent
        fields = ["id", "at", "actor", "verb", "run", "comparison_key", "detail"]
