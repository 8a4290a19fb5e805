"""The strict Content-Security-Policy holds on every page, and nothing the UI needs is blocked by it."""

from __future__ import annotations

import pytest
import requests

from django.core.files.uploadedfile import SimpleUploadedFile

from jobs import services
from tests.e2e.conftest import browser_page
from tests.jobs.helpers import page_record, small_png
from tests.jobs.test_api import run_pages

pytestmark = [pytest.mark.e2e]


@pytest.mark.django_db(transaction=True)
def test_pages_carry_the_policy_and_still_work_under_it(user, asgi_server):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    job, _ = services.job_create(owner=user, file=upload, filename="page.png")
    run_pages(job, [page_record(1)])
    for path in ("/accounts/login/", "/api/v1/docs/", "/healthz"):
        policy = requests.get(asgi_server + path, timeout=30).headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    # browser_page fails the test on any script error or CSP violation on these pages.
    with browser_page(asgi_server, "alice", "pw-alice", enforce_csp=True) as page:
        for path in ("/", "/upload/", "/settings/"):
            page.goto(asgi_server + path)
            page.wait_for_load_state("networkidle")
        page.goto(f"{asgi_server}/jobs/{job.pk}/")
        page.wait_for_selector("#overlay polygon.ln", state="attached", timeout=30000)  # overlays drawn
        page.goto(asgi_server + "/api/v1/docs/")
        page.wait_for_selector(".swagger-ui .opblock", timeout=30000)  # Swagger UI drew the operations
