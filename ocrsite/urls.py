"""Root URLs: admin, the REST API under /api/v1/, and the review UI at the root."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("jobs.api.urls")),
    path("", include("jobs.observability.urls")),  # /healthz, /readyz, /metrics
    path("", include("jobs.web.urls")),
]

# JSON {code, detail} for /api/ paths, Django's pages elsewhere.
handler404 = "jobs.api.exceptions.handler404"
handler500 = "jobs.api.exceptions.handler500"
