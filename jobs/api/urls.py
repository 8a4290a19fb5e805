"""/api/v1/: jobs, languages, pipelines, the OpenAPI schema and Swagger UI."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from jobs.api.review import JobReviewedView, LineCorrectionView
from jobs.api.views import JobViewSet, LanguagesView, PipelinesView
from jobs.api.webhooks import JobWebhookDeliveryList

app_name = "api"

# SimpleRouter, not DefaultRouter: the latter adds format-suffix routes that
# would read /jobs/{id}/result.json as /result with ?format=json.
router = SimpleRouter(trailing_slash=False)  # /api/v1/jobs/{id}, as documented
router.register("jobs", JobViewSet, basename="job")

urlpatterns = [
    *router.urls,
    path("jobs/<str:pk>/webhooks", JobWebhookDeliveryList.as_view(), name="job-webhooks"),
    # Review (jobs/api/review.py)
    path("jobs/<str:pk>/pages/<int:page_number>/lines/<str:line_id>", LineCorrectionView.as_view(), name="job-line"),
    path("jobs/<str:pk>/reviewed", JobReviewedView.as_view(), name="job-reviewed"),
    path("languages", LanguagesView.as_view(), name="languages"),
    path("pipelines", PipelinesView.as_view(), name="pipelines"),
    path("schema/", SpectacularAPIView.as_view(api_version="v1"), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
