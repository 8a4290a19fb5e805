"""/api/v1/: jobs, batches, search, languages, pipelines, the audit log, the OpenAPI schema and Swagger UI."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from jobs.api.audit import AuditLogView
from jobs.api.batches import BatchViewSet
from jobs.api.document_types import DocumentTypeViewSet, JobDocumentTypeView
from jobs.api.fields import JobFieldsFileView, JobFieldsView, JobFieldView
from jobs.api.page_edits import (
    CorrectionUndoView,
    LineCreateView,
    LineMergeView,
    LineSplitView,
    LineView,
    RegionView,
)
from jobs.api.review import JobReviewedView
from jobs.api.review_queue import ReviewQueueView
from jobs.api.search import SearchView
from jobs.api.training import CerReportView, JobCerView, TrainingSetView
from jobs.api.views import JobViewSet, LanguagesView, PipelinesView
from jobs.api.webhooks import JobWebhookDeliveryList, WebhookSecretView
from ocrsite.middleware import allow_inline_styles

app_name = "api"

# SimpleRouter, not DefaultRouter: the latter adds format-suffix routes that
# would read /jobs/{id}/result.json as /result with ?format=json.
router = SimpleRouter(trailing_slash=False)  # /api/v1/jobs/{id}, as documented
router.register("jobs", JobViewSet, basename="job")
router.register("batches", BatchViewSet, basename="batch")
router.register("document-types", DocumentTypeViewSet, basename="document-type")

urlpatterns = [
    *router.urls,
    path("jobs/<str:pk>/webhooks", JobWebhookDeliveryList.as_view(), name="job-webhooks"),
    # Review (jobs/api/review.py)
    # Review edits (jobs/api/page_edits.py): retypes, geometry, undo; every one answers the same shape.
    path("jobs/<str:pk>/pages/<int:page_number>/lines", LineCreateView.as_view(), name="job-lines"),
    path("jobs/<str:pk>/pages/<int:page_number>/lines/merge", LineMergeView.as_view(), name="job-lines-merge"),
    path("jobs/<str:pk>/pages/<int:page_number>/lines/<str:line_id>", LineView.as_view(), name="job-line"),
    path("jobs/<str:pk>/pages/<int:page_number>/lines/<str:line_id>/split", LineSplitView.as_view(),
         name="job-line-split"),
    path("jobs/<str:pk>/pages/<int:page_number>/regions/<str:region_id>", RegionView.as_view(), name="job-region"),
    path("jobs/<str:pk>/corrections/<int:correction_id>/undo", CorrectionUndoView.as_view(),
         name="job-correction-undo"),
    path("jobs/<str:pk>/cer", JobCerView.as_view(), name="job-cer"),
    # Fields (jobs/api/fields.py): a name may address an array's cell, line_items.0.amount.
    path("jobs/<str:pk>/fields", JobFieldsView.as_view(), name="job-fields"),
    path("jobs/<str:pk>/document-type", JobDocumentTypeView.as_view(), name="job-document-type"),
    path("jobs/<str:pk>/fields/<str:name>", JobFieldView.as_view(), name="job-field"),
    re_path(r"^jobs/(?P<pk>[^/]+)/(?P<fmt>fields\.(?:json|csv))$", JobFieldsFileView.as_view(),
            name="job-fields-file"),
    path("training-set", TrainingSetView.as_view(), name="training-set"),
    path("cer", CerReportView.as_view(), name="cer-report"),
    path("review-queue", ReviewQueueView.as_view(), name="review-queue"),
    path("search", SearchView.as_view(), name="search"),
    path("jobs/<str:pk>/reviewed", JobReviewedView.as_view(), name="job-reviewed"),
    path("webhook-secret", WebhookSecretView.as_view(), name="webhook-secret"),
    path("audit", AuditLogView.as_view(), name="audit"),
    path("languages", LanguagesView.as_view(), name="languages"),
    path("pipelines", PipelinesView.as_view(), name="pipelines"),
    path("schema/", SpectacularAPIView.as_view(api_version="v1"), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: no inline script under the CSP.
    path("docs/", allow_inline_styles(SpectacularSwaggerSplitView.as_view(url_name="api:schema")), name="docs"),
]
