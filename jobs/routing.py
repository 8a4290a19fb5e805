"""WebSocket routes; ``ocrsite.asgi`` wraps them in ``jobs.ws_auth.WebsocketAuth``."""

from django.urls import path

from jobs.consumers import JobConsumer, UserJobsConsumer

websocket_urlpatterns = [
    path("ws/jobs/", UserJobsConsumer.as_asgi()),
    # str, not uuid: a malformed id is refused by the consumer like an unknown one.
    path("ws/jobs/<str:job_id>/", JobConsumer.as_asgi()),
]
