"""Browser UI routes (namespace ``web``), including log-in and log-out."""

from django.contrib.auth import views as auth_views
from django.urls import path

from jobs.web import views
from jobs.web.review_queue import review_queue_page

app_name = "web"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("upload/", views.upload, name="upload"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="job"),
    path("review/", review_queue_page, name="review-queue"),
    path("settings/", views.account_settings, name="settings"),
    path("settings/token/", views.token_regenerate, name="token-regenerate"),
    path("settings/webhook-secret/", views.webhook_secret_new, name="webhook-secret"),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="web:login"), name="logout"),
]
