"""REST API v1 over real PostgreSQL, storage and the ORM broker (no OCR engine needed)."""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone
from django_q.models import OrmQ
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from jobs import services
from jobs.api.serializers import JobSerializer, PageSerializer
from jobs.models import Document, Job, LineCorrection, PageResult
from tests.conftest import token_client
from tests.jobs.factories import JobFactory, PageResultFactory, UserFactory, png_bytes
from tests.jobs.helpers import TESTER, Site, failed_record, page_record, small_png, three_page_pdf
from tests.ocr_engine import bad_files, samples

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs"


def upload(client, data: bytes, name: str = "scan.png", **options):
    return client.post(JOBS, {"file": SimpleUploadedFile(name, data), **options}, format="multipart")


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def run_pages(job: Job, records) -> Job:
    """Play a worker's part with real service calls: claim, record pages, finish."""
    services.job_claim(job_id=job.pk, worker_id="test-worker")
    for record in records:
        services.job_record_page(job_id=job.pk, worker_id="test-worker", record=record)
    return services.job_finish(job_id=job.pk, worker_id="test-worker")


@pytest.fixture
def file_server():
    """A local HTTP server standing in for a remote site that hosts documents: (its URL, its routes)."""
    site = Site()
    yield site.url, site.routes
    site.close()


# --- submit -------------------------------------------------------------------

def test_submit_upload_returns_202_with_location(api_client):
    response = upload(api_client, small_png(), pipeline="ocr", lang="en")

    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["reused"] is False
    assert body["queue_position"] == 1 and body["progress"] == {"pages_done": 0, "pages_total": 1, "percent": 0.0}
    assert response["Location"].endswith(f"/api/v1/jobs/{body['id']}")
    assert body["document"]["name"] == "scan.png" and body["document"]["media_type"] == "image/png"
    assert OrmQ.objects.count() == 1


def test_each_submit_answers_its_place_in_the_queue_as_the_job_status_later_does(api_client, other_api_client):
    first = upload(api_client, small_png()).json()
    second = upload(other_api_client, small_png()).json()  # another owner: not a duplicate
    third = upload(api_client, three_page_pdf(), name="report.pdf").json()

    assert [job["queue_position"] for job in (first, second, third)] == [1, 2, 3]
    assert [api_client.get(f"{JOBS}/{job['id']}").json()["queue_position"] for job in (first, third)] == [1, 3]
    api_client.post(f"{JOBS}/{first['id']}/cancel")
    assert api_client.get(f"{JOBS}/{third['id']}").json()["queue_position"] == 2
    assert upload(api_client, small_png(), lang="de").json()["queue_position"] == 3


def test_resubmission_within_window_returns_the_same_job(api_client):
    first = upload(api_client, small_png()).json()
    again = upload(api_client, small_png())

    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["reused"] is True
    assert Job.objects.count() == 1 and OrmQ.objects.count() == 1


@pytest.mark.parametrize("spooled", [False, True], ids=["in memory", "spooled to disk"])
def test_an_upload_is_hashed_as_it_streams_and_stored_whole(api_client, settings, media_root, spooled):
    if spooled:  # past the in-memory limit Django spools the file; storing it moves that file
        settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    data = samples.encode(samples.text_page(dpi=100).image, "PNG")
    assert len(data) > 20 * 1024

    body = upload(api_client, data).json()
    document = Document.objects.get(jobs__id=body["id"])

    assert body["document"]["sha256"] == document.sha256 == hashlib.sha256(data).hexdigest()
    assert document.file.open("rb").read() == data
    assert not any((media_root / ".uploading").glob("*"))  # nothing left where it spooled
    again = upload(api_client, data)  # the same bytes: the same hash, the same job
    assert again.status_code == 200 and again.json()["id"] == body["id"]


def test_submit_by_url_queues_the_job_for_a_worker_to_download(api_client, file_server, media_root):
    base, routes = file_server
    routes["/docs/report.pdf"] = (200, three_page_pdf())

    response = api_client.post(JOBS, {"file_url": f"{base}/docs/report.pdf", "pages": "2-3"}, format="json")

    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["reused"] is False and body["document"]["name"] == "report.pdf"
    # Its pages are known once the worker has the file (tests/jobs/test_file_url.py); nothing is stored yet.
    assert body["page_numbers"] == [] and body["progress"]["pages_total"] == 0
    assert files_under(media_root / "documents") == [] and OrmQ.objects.count() == 1


def test_a_job_whose_file_is_not_downloaded_yet_can_be_deleted(api_client, file_server):
    base, _ = file_server
    job_id = api_client.post(JOBS, {"file_url": f"{base}/a.pdf"}, format="json").json()["id"]

    assert api_client.delete(f"{JOBS}/{job_id}").status_code == 204
    assert not Job.objects.exists() and not Document.objects.exists()


@pytest.mark.parametrize("payload, status, code", [
    pytest.param({"file_url": "ftp://example.org/a.pdf"}, 400, "url_not_allowed", id="not-http"),
    pytest.param({"file_url": "http://user:secret@example.org/a.pdf"}, 400, "url_not_allowed", id="credentials"),
    pytest.param({"file_url": "http://example.org/a.pdf", "pages": "3-1"}, 400, "invalid_page_range",
                 id="a-range-no-file-has"),
    pytest.param({"file_url": "http://example.org/a.pdf", "lang": "klingon"}, 400, "unsupported_option",
                 id="options"),
])
def test_what_a_url_submit_can_be_judged_on_is_refused_in_the_request(api_client, payload, status, code):
    response = api_client.post(JOBS, payload, format="json")

    assert (response.status_code, response.json()["code"]) == (status, code), response.json()
    assert not Job.objects.exists() and not Document.objects.exists() and not OrmQ.objects.exists()


BAD_UPLOADS = [
    pytest.param(lambda: b"just some text\n", {}, 415, "unsupported_file_type", id="text"),
    pytest.param(lambda: b"", {}, 422, "empty_document", id="empty"),
    pytest.param(lambda: small_png()[:24], {}, 422, "corrupt_file", id="cut-in-its-header"),
    pytest.param(lambda: bad_files.encrypted_pdf(), {}, 422, "encrypted_document", id="encrypted"),
    pytest.param(lambda: bad_files.zero_page_pdf(), {}, 422, "empty_document", id="zero-pages"),
    pytest.param(lambda: bad_files.bomb_png(), {}, 413, "image_too_large", id="bomb"),
    pytest.param(three_page_pdf, {"pages": "1-x"}, 400, "invalid_page_range", id="bad-range"),
    pytest.param(three_page_pdf, {"pages": "2-9"}, 422, "page_out_of_range", id="out-of-range"),
    pytest.param(small_png, {"lang": "klingon"}, 400, "unsupported_option", id="lang"),
    pytest.param(small_png, {"pipeline": "magic"}, 400, "unsupported_option", id="pipeline"),
    pytest.param(small_png, {"pipeline": "vl"}, 400, "gpu_required", id="vl-without-gpu"),
]


@pytest.mark.parametrize("make, options, status, code", BAD_UPLOADS)
def test_bad_input_gets_status_and_code_and_stores_nothing(api_client, media_root, make, options, status, code):
    response = upload(api_client, make(), **options)

    assert response.status_code == status, response.json()
    assert response.json()["code"] == code and response.json()["detail"]
    assert not Document.objects.exists() and not Job.objects.exists() and not OrmQ.objects.exists()
    assert files_under(media_root) == []


def test_limits_from_settings(api_client, settings, media_root):
    settings.OCR_MAX_UPLOAD_BYTES = 1000
    too_big = upload(api_client, small_png() + b"\0" * 1000)
    settings.OCR_MAX_UPLOAD_BYTES = 50 * 2**20
    settings.OCR_MAX_PAGES = 2
    too_many = upload(api_client, three_page_pdf(), name="report.pdf")

    assert (too_big.status_code, too_big.json()["code"]) == (413, "file_too_large")
    assert (too_many.status_code, too_many.json()["code"]) == (422, "too_many_pages")
    assert not Job.objects.exists() and files_under(media_root) == []


@pytest.mark.parametrize("payload, fields", [
    ({}, "non_field_errors"),
    ({"file_url": "not a url"}, "file_url"),
])
def test_form_errors_are_invalid_request_with_fields(api_client, payload, fields):
    response = api_client.post(JOBS, payload, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request" and fields in response.json()["fields"]


def test_file_and_file_url_together_are_refused(api_client):
    response = upload(api_client, small_png(), file_url="http://example.org/a.pdf")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_request")
    assert "exactly one" in response.json()["detail"] and not Job.objects.exists()


def test_private_urls_are_refused_unless_allowed(api_client, settings, file_server):
    base, routes = file_server
    routes["/a.png"] = (200, small_png())
    settings.OCR_ALLOW_PRIVATE_URLS = False

    fetched = api_client.post(JOBS, {"file_url": f"{base}/a.png"}, format="json")
    metadata = api_client.post(JOBS, {"file_url": "http://169.254.169.254/latest/meta-data"}, format="json")
    webhook = upload(api_client, small_png(), webhook_url="http://10.0.0.8/hook")

    for response in (fetched, metadata, webhook):
        assert (response.status_code, response.json()["code"]) == (400, "url_not_allowed")
    assert not Job.objects.exists()


def test_authentication_required():
    response = APIClient().get(JOBS)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


# --- read ----------------------------------------------------------------------

def test_two_users_cannot_see_or_touch_each_others_jobs(api_client, other_api_client, staff_user):
    from tests.conftest import token_client

    job_id = upload(api_client, small_png()).json()["id"]
    job_url = f"{JOBS}/{job_id}"

    assert other_api_client.get(JOBS).json()["count"] == 0
    for method, suffix in [("get", ""), ("get", "/result"), ("get", "/result.json"), ("get", "/pages/1"),
                           ("get", "/export.txt"), ("post", "/cancel"), ("post", "/retry"), ("delete", "")]:
        response = getattr(other_api_client, method)(job_url + suffix)
        assert response.status_code == 404, (method, suffix)
        assert response.json()["code"] == "not_found"
    assert Job.objects.get(pk=job_id).status == "queued"

    assert token_client(staff_user).get(job_url).status_code == 200
    assert api_client.get(f"{JOBS}/not-a-uuid").status_code == 404


def test_list_filters_and_pagination(api_client, user):
    ocr = upload(api_client, small_png(), pipeline="ocr").json()
    structure = upload(api_client, three_page_pdf(), name="r.pdf").json()
    services.job_cancel(job=Job.objects.get(pk=structure["id"]), by=TESTER)

    everything = api_client.get(JOBS).json()
    assert everything["count"] == 2 and [j["id"] for j in everything["results"]] == [structure["id"], ocr["id"]]
    assert [j["id"] for j in api_client.get(JOBS, {"status": "canceled"}).json()["results"]] == [structure["id"]]
    assert [j["id"] for j in api_client.get(JOBS, {"pipeline": "ocr"}).json()["results"]] == [ocr["id"]]
    assert api_client.get(JOBS, {"created_after": "2999-01-01T00:00:00Z"}).json()["count"] == 0
    assert api_client.get(JOBS, {"created_before": "2999-01-01T00:00:00Z"}).json()["count"] == 2
    bad = api_client.get(JOBS, {"status": "sleeping"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_request"


def test_a_list_of_queued_jobs_answers_each_place_in_its_cluster_at_a_cost_that_does_not_grow(
        api_client, user, other_user, django_assert_max_num_queries):
    def queue(owner, cluster, minutes_ago):
        job = JobFactory(owner=owner, cluster=cluster)
        Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
        return job

    # Oldest first per cluster: cpu 1 (alice), 2 (bob), 3 (alice), 4 (alice, running: no place) ...
    cpu = [queue(user, Job.Cluster.CPU, 50), queue(other_user, Job.Cluster.CPU, 40), queue(user, Job.Cluster.CPU, 30)]
    gpu = [queue(user, Job.Cluster.GPU, 45), queue(user, Job.Cluster.GPU, 35)]
    running = queue(user, Job.Cluster.CPU, 20)
    Job.objects.filter(pk=running.pk).update(status=Job.Status.RUNNING)

    with django_assert_max_num_queries(6) as few:
        places = {job["id"]: job["queue_position"] for job in api_client.get(JOBS).json()["results"]}
    assert places == {str(cpu[0].pk): 1, str(cpu[2].pk): 3, str(gpu[0].pk): 1, str(gpu[1].pk): 2,
                      str(running.pk): None}  # bob's job is not alice's to see, but it holds its place

    for minutes_ago in range(30):  # queued before all of the above
        queue(user, Job.Cluster.CPU, 100 + minutes_ago)
    with django_assert_max_num_queries(len(few.captured_queries)):
        listed = api_client.get(JOBS).json()["results"]
    assert sorted(job["queue_position"] for job in listed if job["cluster"] == "cpu" and job["queue_position"]) == [
        *range(1, 31), 31, 33]


def test_result_inline_or_links_by_size(api_client, settings):
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="r.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2, texts=("Page two",)), page_record(3)])

    inline = api_client.get(f"{JOBS}/{job.pk}/result").json()
    assert inline["inline"] is True and inline["complete"] is True
    assert [p["page_number"] for p in inline["result"]["pages"]] == [1, 2, 3]
    assert inline["result"]["pages"][1]["lines"][0]["text"] == "Page two"
    assert inline["result"]["source"]["filename"] == "r.pdf"

    settings.OCR_INLINE_RESULT_MAX_BYTES = 500
    linked = api_client.get(f"{JOBS}/{job.pk}/result").json()
    assert linked["inline"] is False and "result" not in linked and linked["size_bytes"] > 500
    assert [u.rsplit("/", 1)[-1] for u in linked["pages"]] == ["1", "2", "3"]
    download = api_client.get(linked["download"])
    assert download.status_code == 200 and download["Content-Type"] == "application/json"
    assert download.json() == inline["result"]
    page = api_client.get(linked["pages"][1]).json()
    assert page["normalized"]["lines"][0]["text"] == "Page two" and page["raw"] == {"rec_texts": ["Hello"]}


def test_page_images_and_exports_with_corrections(api_client):
    job = Job.objects.get(pk=upload(api_client, small_png()).json()["id"])
    run_pages(job, [page_record(1)])
    page = PageResult.objects.get(job=job)
    LineCorrection.objects.create(page=page, line_id="p1-l2", text="Corrected line", original_text="Second line")

    detail = api_client.get(f"{JOBS}/{job.pk}/pages/1").json()
    line = detail["normalized"]["lines"][1]
    assert (line["text"], line["original_text"]) == ("Corrected line", "Second line")
    image = api_client.get(detail["links"]["image"])
    assert image.status_code == 200 and image["Content-Type"] == "image/jpeg"
    assert b"".join(image.streaming_content)[:2] == b"\xff\xd8"

    text = api_client.get(f"{JOBS}/{job.pk}/export.txt")
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    assert "Corrected line" in text.content.decode() and "Second line" not in text.content.decode()
    for fmt in ("md", "json", "hocr", "alto"):
        assert api_client.get(f"{JOBS}/{job.pk}/export.{fmt}").status_code == 200, fmt
    unknown = api_client.get(f"{JOBS}/{job.pk}/export.docx")
    assert (unknown.status_code, unknown.json()["code"]) == (400, "unsupported_option")
    assert api_client.get(f"{JOBS}/{job.pk}/pages/2").status_code == 404


# --- actions ----------------------------------------------------------------

def test_cancel_then_cancel_again_conflicts(api_client):
    job_id = upload(api_client, small_png()).json()["id"]

    canceled = api_client.post(f"{JOBS}/{job_id}/cancel")
    again = api_client.post(f"{JOBS}/{job_id}/cancel")

    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    assert (again.status_code, again.json()["code"]) == (409, "invalid_state")


def test_retry_requeues_only_failed_pages(api_client):
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="r.pdf").json()["id"])
    run_pages(job, [page_record(1), failed_record(2), page_record(3)])
    detail = api_client.get(f"{JOBS}/{job.pk}").json()
    assert detail["status"] == "failed" and detail["error"]["code"] == "pages_failed"

    retried = api_client.post(f"{JOBS}/{job.pk}/retry")

    assert retried.status_code == 202 and retried.json()["status"] == "queued"
    assert retried.json()["progress"]["pages_done"] == 2
    assert sorted(job.pages.values_list("page_number", flat=True)) == [1, 3]
    assert api_client.post(f"{JOBS}/{job.pk}/retry").status_code == 409


def test_delete_removes_job_and_files(api_client, media_root, django_capture_on_commit_callbacks):
    job = Job.objects.get(pk=upload(api_client, small_png()).json()["id"])
    run_pages(job, [page_record(1)])
    assert len(files_under(media_root)) == 3

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.delete(f"{JOBS}/{job.pk}")

    assert response.status_code == 204
    assert api_client.get(f"{JOBS}/{job.pk}").status_code == 404
    assert files_under(media_root) == [] and not Document.objects.exists()


# --- server info and docs -------------------------------------------------------

def test_languages_pipelines_and_docs(api_client, settings):
    languages = api_client.get("/api/v1/languages").json()
    assert {"code": "en", "name": "English"} in languages["languages"]

    pipelines = {p["name"]: p for p in api_client.get("/api/v1/pipelines").json()["pipelines"]}
    assert pipelines["ocr"]["available"] and pipelines["ocr"]["cluster"] == "cpu"
    assert pipelines["vl"]["available"] is False
    settings.OCR_GPU_CLUSTER = True
    assert api_client.get("/api/v1/pipelines").json()["pipelines"][2]["available"] is True

    schema = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200 and "/api/v1/jobs/{id}/cancel" in schema.json()["paths"]
    docs = api_client.get("/api/v1/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower() and b"cdn" not in docs.content.lower()


@pytest.mark.django_db(transaction=True)
def test_wait_answers_when_the_job_ends(api_client):
    job_id = upload(api_client, small_png()).json()["id"]
    assert api_client.get(f"{JOBS}/{job_id}?wait=0.3").json()["status"] == "queued"  # not final: waited it out
    threading.Timer(0.5, lambda: services.job_cancel(job=Job.objects.get(pk=job_id), by=TESTER)).start()
    t0 = time.monotonic()
    response = api_client.get(f"{JOBS}/{job_id}?wait=20")
    assert response.status_code == 200 and response.json()["status"] == "canceled"
    assert time.monotonic() - t0 < 3  # woken by the job's end, not by the end of the wait
    assert api_client.get(f"{JOBS}/{job_id}?wait=seconds").status_code == 400


@pytest.mark.django_db(transaction=True)
def test_many_waits_on_several_jobs_each_answer_when_their_own_job_ends(api_client, user):
    """All of a process's waits share one watcher of job ends: each wakes for its own job only."""
    first, second = (upload(api_client, png_bytes(color=color)).json()["id"] for color in ("white", "gray"))
    answered: dict[int, tuple[str, float]] = {}
    t0 = time.monotonic()

    def wait(index: int, job_id: str) -> None:
        try:
            status = token_client(user).get(f"{JOBS}/{job_id}?wait=20").json()["status"]
            answered[index] = (status, time.monotonic() - t0)
        finally:
            connection.close()  # this thread's own

    waits = [threading.Thread(target=wait, args=(i, first if i < 3 else second)) for i in range(5)]
    for thread in waits:
        thread.start()
    time.sleep(0.5)
    services.job_cancel(job=Job.objects.get(pk=first), by=TESTER)
    time.sleep(1.5)
    assert sorted(answered) == [0, 1, 2]  # the second job's waits go on
    services.job_cancel(job=Job.objects.get(pk=second), by=TESTER)
    for thread in waits:
        thread.join(10)
    assert all(status == "canceled" for status, _ in answered.values())
    assert all(seconds < 1.5 for index, (_, seconds) in answered.items() if index < 3)
    assert all(2 <= seconds < 4 for index, (_, seconds) in answered.items() if index >= 3)


def test_job_serializers_get_fields_of_their_own_built_as_drf_builds_them():
    for serializer_class in (JobSerializer, PageSerializer):
        first, second = serializer_class(), serializer_class()
        drf_built = serializers.ModelSerializer.get_fields(serializer_class())
        assert {name: type(field) for name, field in first.fields.items()} == \
            {name: type(field) for name, field in drf_built.items()}
        assert all(first.fields[name] is not second.fields[name] and first.fields[name].parent is first
                   for name in drf_built)


def test_job_links_and_templates_name_the_routes_they_lead_to(api_client):
    job = upload(api_client, small_png()).json()
    links = job["links"]
    assert links["self"] == f"http://testserver{JOBS}/{job['id']}"
    assert links["exports"]["alto"] == f"http://testserver{JOBS}/{job['id']}/export.alto"
    assert links["correction_undo"] == f"http://testserver{JOBS}/{job['id']}/corrections/{{correction_id}}/undo"
    assert api_client.get(links["self"]).json()["id"] == job["id"]


@pytest.mark.django_db
def test_jobs_and_pages_are_written_as_drf_writes_them_from_fields_bound_once():
    now = timezone.now()
    reviewed = JobFactory(status=Job.Status.SUCCEEDED, started_at=now - timedelta(seconds=3), finished_at=now,
                          reviewed_at=now, reviewed_by=UserFactory(), timings={"ocr": 1.25}, attempts=1,
                          webhook_url="https://example.org/hook", pages_spec="1")
    failed = JobFactory(status=Job.Status.FAILED, error_code="invalid_file", error_detail="not a PNG")
    queued = [JobFactory(owner=reviewed.owner) for _ in range(2)]
    page = PageResultFactory(job=reviewed, width=800, height=600, line_count=3, timings={"rec": 0.5},
                             error_code="", normalized=None)
    context = {"request": Request(APIRequestFactory().get("/"))}
    for serializer in [JobSerializer(job, context=context) for job in (reviewed, failed, *queued)] + [
            PageSerializer(page, context=context), PageSerializer(page, context={**context, "with_raw": False})]:
        expected = serializers.Serializer.to_representation(serializer, serializer.instance)  # DRF's own
        if serializer.context.get("with_raw") is False:
            del expected["raw"]
        assert serializer.data == expected
    assert JobSerializer(queued[1], context=context).data["queue_position"] == 2
    assert JobSerializer(reviewed, context=context).data["reviewed_by"] == reviewed.reviewed_by.username
