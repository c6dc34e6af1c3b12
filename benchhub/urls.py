"""Top-level URLs: pages, the admin, and the API."""

from django.contrib import admin
from django.urls import include, path

from benchhub.api.urls import urlpatterns as api_urls
from benchhub.api.urls import v1

urlpatterns = [
    path("", include("benchhub.dashboard.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(v1)),
    path("api/", include(api_urls)),
]

handler404 = "benchhub.api.views.not_found"
handler500 = "benchhub.api.views.server_error"
