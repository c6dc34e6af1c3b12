"""The API's OpenAPI schema and interactive docs, under /api/. The operations' URLs (/api/v1/)
are the project's: benchhub/urls.py."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file, and our template its style
    # sheet, so CSP needs no inline script or style.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
]
