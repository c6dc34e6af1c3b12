"""Cursor pagination: stable under inserts, and cheap at any depth of history.

A list view names its class as `pagination_class` and pages through `self.pagination_class()`;
drf-spectacular reads that attribute, so the schema describes the envelope the view answers
(`next`, `previous`, `results`) and the `cursor` and `page_size` parameters, not a bare array.
"""

from typing import Any

from rest_framework.pagination import CursorPagination


class EnvelopeCursorPagination(CursorPagination):
    """Answers {"next": url | null, "previous": url | null, "results": [...]}: all three, always."""

    page_size = 50
    page_size_query_param = "page_size"

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        envelope = super().get_paginated_response_schema(schema)
        return {**envelope, "required": ["next", "previous", "results"]}


class CreatedCursorPagination(EnvelopeCursorPagination):
    ordering = ("-created_at", "-id")
    max_page_size = 500
