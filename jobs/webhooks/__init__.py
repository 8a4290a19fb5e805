"""Webhooks: a signed POST to the job's ``webhook_url`` when a job succeeds or fails (a batch's when a batch ends).

``services`` schedules and sends deliveries, ``payloads`` and ``signing`` build
what is sent, ``tasks`` is the django-q2 entry point, ``selectors`` the delivery
log. The wire format is documented for receivers in docs/webhooks.md.
"""

from jobs.webhooks.services import webhook_schedule_for_batch, webhook_schedule_for_job

__all__ = ["webhook_schedule_for_batch", "webhook_schedule_for_job"]
