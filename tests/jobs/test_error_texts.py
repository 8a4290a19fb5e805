"""Errors caused by exceptions (the engine's, the platform's) reach users as a fixed text of their code;
the exception, whose text can name files and internals, goes to the log."""

from __future__ import annotations

import logging

import pytest

from jobs import services
from jobs.errors import FIXED_PAGE_ERRORS
from jobs.engines.pool import get_engine
from jobs.models import Job
from jobs.reread import reread_box
from jobs.services.pages import page_read
from ocr_engine.inputs import open_document
from tests.jobs.helpers import small_png
from tests.jobs.test_api import JOBS, upload
from tests.jobs.test_page_edits import two_region_job

pytestmark = pytest.mark.django_db


@pytest.mark.models
def test_a_page_the_engine_failed_on_unexpectedly_shows_a_fixed_text_and_the_log_has_the_exception(
        api_client, caplog):
    job = Job.objects.get(pk=upload(api_client, small_png()).json()["id"])
    services.job_claim(job_id=job.pk, worker_id="w")
    document = open_document(small_png())
    document.close()  # the engine then fails inside the document reader: "ValueError: The document is closed."

    with caplog.at_level(logging.ERROR, logger="jobs.services.pages"):
        record = page_read(get_engine("ocr", "en"), document, 1)
    services.job_record_page(job_id=job.pk, worker_id="w", record=record)
    services.job_finish(job_id=job.pk, worker_id="w")

    page = api_client.get(f"{JOBS}/{job.pk}/pages/1").json()
    assert page["error"] == {"code": "internal_error", "detail": FIXED_PAGE_ERRORS["internal_error"]}
    shown = api_client.get(f"{JOBS}/{job.pk}").json()["error"]
    assert shown["code"] == "pages_failed" and FIXED_PAGE_ERRORS["internal_error"] in shown["detail"]
    assert "closed" not in str(page) + str(shown) and "ValueError" not in str(page) + str(shown)
    assert "The document is closed" in caplog.text  # with its traceback, for the operator


def test_a_box_the_worker_could_not_read_answers_a_code_and_the_log_has_the_exception(user, caplog):
    page = two_region_job(user).pages.get()
    page.image.storage.delete(page.image.name)  # the worker's read fails: "No such file or directory: '/…'"

    with caplog.at_level(logging.ERROR, logger="jobs.reread"):
        answer = reread_box(page.pk, [[10, 2], [90, 2], [90, 18], [10, 18]])

    assert answer == {"error": "reread_failed"}  # what the waiting request reads: no path, no exception
    assert "No such file or directory" in caplog.text and page.image.name in caplog.text
