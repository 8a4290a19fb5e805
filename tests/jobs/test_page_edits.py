"""Geometry review through the API (jobs/api/page_edits.py): every route, undo, exports, other users' 404."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from jobs import services
from jobs.models import Job, LineCorrection, PageEdit, PageResult
from ocr_engine.schema import Region
from tests.jobs.factories import JobFactory
from tests.jobs.helpers import corrected_job, page_record

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs"


def two_region_job(owner, confidence: float = 0.9) -> Job:
    """One page (100x40 px): region r1 holds "Hello world" and "Second line", region r2 is empty."""
    record = page_record(1, confidence=confidence)
    record.page.regions.append(Region(id="p1-r2", type="text", label="text", order=2, bbox=[0, 30, 100, 40],
                                      polygon=[[0, 30], [100, 30], [100, 40], [0, 40]], confidence=0.9, text=""))
    job = JobFactory(owner=owner)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=record)
    return services.job_finish(job_id=job.pk, worker_id="w")


def page_url(job, rest="") -> str:
    return f"{JOBS}/{job.pk}/pages/1{rest}"


def texts(body) -> list[str]:
    return [line["text"] for line in body["normalized"]["lines"]]


def test_a_typed_new_line_is_added_to_the_region_under_it_and_to_every_export(api_client, user):
    job = two_region_job(user)

    response = api_client.post(page_url(job, "/lines"), {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]],
                                                         "text": "Missed line"}, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["line"]["id"] == "p1-l3" and body["line"]["region_id"] == "p1-r2"
    assert body["line"]["bbox"] == [10, 32, 60, 39] and body["line"]["text"] == "Missed line"
    assert texts(body) == ["Hello world", "Second line", "Missed line"]
    assert body["correction"]["kind"] == "line_create" and body["correction"]["made_by"] == "alice"
    # The engine's output is untouched; the corrected page is what the API and exports show.
    assert [line["id"] for line in PageResult.objects.get().normalized["lines"]] == ["p1-l1", "p1-l2"]
    assert "Missed line" in api_client.get(f"{JOBS}/{job.pk}/export.txt").content.decode()
    assert "Missed line" in api_client.get(f"{JOBS}/{job.pk}/result").json()["result"]["text"]


def test_moving_a_line_with_text_given_changes_box_and_text_and_undo_restores_it(api_client, user):
    job = two_region_job(user)

    body = api_client.patch(page_url(job, "/lines/p1-l1"), {"polygon": [[5, 2], [90, 2], [90, 16], [5, 16]],
                                                             "text": "Hello, world"}, format="json").json()

    assert body["line"]["bbox"] == [5, 2, 90, 16]
    assert (body["line"]["text"], body["line"]["original_text"]) == ("Hello, world", "Hello world")
    undone = api_client.post(f"{JOBS}/{job.pk}/corrections/{body['correction']['id']}/undo")
    assert undone.status_code == 200 and undone.json()["correction"]["undone_at"]
    assert texts(undone.json())[0] == "Hello world"
    assert undone.json()["normalized"]["lines"][0]["bbox"] == [0, 20, 100, 38]
    again = api_client.post(f"{JOBS}/{job.pk}/corrections/{body['correction']['id']}/undo")
    assert again.status_code == 409 and again.json()["code"] == "invalid_state"


def test_a_line_moves_to_another_region_and_follows_its_reading_order(api_client, user):
    job = two_region_job(user)
    api_client.patch(page_url(job, "/lines/p1-l1"), {"region_id": "p1-r2"}, format="json")

    body = api_client.get(page_url(job)).json()

    assert texts(body) == ["Second line", "Hello world"]
    assert [line["order"] for line in body["normalized"]["lines"]] == [1, 2]


def test_split_cuts_box_and_text_at_the_point_and_merge_joins_them_again(api_client, user):
    job = two_region_job(user)

    split = api_client.post(page_url(job, "/lines/p1-l1/split"), {"at": 45}, format="json")

    assert split.status_code == 200, split.json()
    body = split.json()
    assert body["new_line_id"] == "p1-l3"
    assert texts(body) == ["Hello", "world", "Second line"]
    assert [line["bbox"] for line in body["normalized"]["lines"][:2]] == [[0, 20, 45, 38], [45, 20, 100, 38]]

    merged = api_client.post(page_url(job, "/lines/merge"), {"line_ids": ["p1-l3", "p1-l1"]}, format="json")

    assert merged.status_code == 200, merged.json()
    assert texts(merged.json()) == ["Hello world", "Second line"]
    assert merged.json()["line"]["id"] == "p1-l1" and merged.json()["line"]["bbox"] == [0, 20, 100, 38]


def test_delete_removes_the_line_from_page_text_and_exports(api_client, user):
    job = two_region_job(user)

    response = api_client.delete(page_url(job, "/lines/p1-l2"))

    assert response.status_code == 200
    assert texts(response.json()) == ["Hello world"]
    assert "Second line" not in api_client.get(f"{JOBS}/{job.pk}/export.txt").content.decode()
    assert PageEdit.objects.get().made_by == user


def test_region_type_and_reading_order_change(api_client, user):
    job = two_region_job(user)
    api_client.patch(page_url(job, "/lines/p1-l2"), {"region_id": "p1-r2"}, format="json")

    body = api_client.patch(page_url(job, "/regions/p1-r2"), {"type": "title", "order": 1}, format="json").json()

    regions = {r["id"]: r for r in body["normalized"]["regions"]}
    assert (regions["p1-r2"]["type"], regions["p1-r2"]["order"], regions["p1-r1"]["order"]) == ("title", 1, 2)
    assert texts(body) == ["Second line", "Hello world"]
    assert body["normalized"]["text"].index("Second line") < body["normalized"]["text"].index("Hello world")


def test_every_edit_answers_the_page_as_get_shows_it_with_its_correction_and_line(api_client, user):
    """One shape whichever store an edit goes to (docs/review.md, "What an edit answers")."""
    job = two_region_job(user)

    def edit(method, url, data=None):
        response = getattr(api_client, method)(url, data, format="json")
        assert response.status_code in (200, 201), response.json()
        body = response.json()
        page = api_client.get(page_url(job), {"raw": "false"}).json()
        assert {key: body[key] for key in page} == page  # the page exactly as GET ?raw=false shows it
        assert set(body) - set(page) - {"new_line_id"} == {"correction", "line"}
        return body

    retyped = edit("patch", page_url(job, "/lines/p1-l2"), {"text": "Second line, fixed"})  # a LineCorrection
    assert retyped["correction"]["kind"] == "line_text" and retyped["correction"]["id"] is None
    assert (retyped["line"]["text"], retyped["line"]["original_text"]) == ("Second line, fixed", "Second line")

    drawn = edit("post", page_url(job, "/lines"), {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]],
                                                    "text": "Drawn"})
    assert drawn["correction"]["kind"] == "line_create" and drawn["line"]["id"] == "p1-l3"

    # The page now has a geometry edit: retypes of engine lines and of the drawn line are PageEdits,
    # answered alike.
    engine = edit("patch", page_url(job, "/lines/p1-l1"), {"text": "Hello, world"})
    assert (engine["line"]["text"], engine["line"]["original_text"]) == ("Hello, world", "Hello world")
    assert engine["correction"]["kind"] == "line_change" and engine["correction"]["made_by"] == "alice"
    redrawn = edit("patch", page_url(job, "/lines/p1-l3"), {"text": "Drawn, fixed"})
    assert redrawn["line"]["text"] == "Drawn, fixed" and redrawn["correction"]["kind"] == "line_change"
    assert LineCorrection.objects.count() == 1 and PageEdit.objects.count() == 3

    split = edit("post", page_url(job, "/lines/p1-l1/split"), {"at": 45})
    assert (split["line"]["text"], split["new_line_id"]) == ("Hello,", "p1-l4")
    merged = edit("post", page_url(job, "/lines/merge"), {"line_ids": ["p1-l1", "p1-l4"]})
    assert merged["line"]["text"] == "Hello, world"
    region = edit("patch", page_url(job, "/regions/p1-r2"), {"type": "title"})
    assert region["line"] is None and region["correction"]["kind"] == "region_change"
    deleted = edit("delete", page_url(job, "/lines/p1-l3"))
    assert deleted["line"] is None and deleted["correction"]["undone_at"] is None
    undone = edit("post", f"{JOBS}/{job.pk}/corrections/{deleted['correction']['id']}/undo")
    assert undone["line"]["text"] == "Drawn, fixed" and undone["correction"]["undone_at"]
    assert undone["correction"]["id"] == deleted["correction"]["id"]


@pytest.mark.parametrize(("method", "rest", "data", "code"), [
    ("post", "/lines", {"polygon": [[0, 0], [1, 0], [1, 1]], "text": "x"}, "invalid_input"),  # too small
    ("post", "/lines", {"polygon": [[0, 0], [500, 0], [500, 30], [0, 30]], "text": "x"}, "invalid_input"),
    ("post", "/lines", {"polygon": "nope"}, "invalid_request"),
    ("patch", "/lines/p1-l9", {"text": "x", "region_id": "p1-r1"}, "line_not_found"),
    ("patch", "/lines/p1-l1", {"region_id": "p1-r9"}, "region_not_found"),
    ("post", "/lines/p1-l1/split", {"at": 0}, "invalid_input"),
    ("post", "/lines/merge", {"line_ids": ["p1-l1", "p1-l1"]}, "invalid_input"),
    ("patch", "/regions/p1-r1", {"type": "poem"}, "invalid_input"),
    ("patch", "/regions/p1-r1", {"order": 3}, "invalid_input"),
])
def test_bad_edits_are_refused_with_a_code(api_client, user, method, rest, data, code):
    job = two_region_job(user)

    response = getattr(api_client, method)(page_url(job, rest), data, format="json")

    assert response.status_code in (400, 404), response.json()
    assert response.json()["code"] == code
    assert not PageEdit.objects.exists()


@pytest.mark.parametrize(("method", "rest", "data"), [
    ("post", "/lines", {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]], "text": "x"}),
    ("patch", "/lines/p1-l1", {"polygon": [[5, 2], [90, 2], [90, 16], [5, 16]], "text": "x"}),
    ("delete", "/lines/p1-l1", None),
    ("post", "/lines/p1-l1/split", {"at": 45}),
    ("post", "/lines/merge", {"line_ids": ["p1-l1", "p1-l2"]}),
    ("patch", "/regions/p1-r1", {"type": "title"}),
])
def test_another_user_gets_404_on_every_route(api_client, other_api_client, user, method, rest, data):
    job = two_region_job(user)

    response = getattr(other_api_client, method)(page_url(job, rest), data, format="json")

    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert not PageEdit.objects.exists()
    edit = api_client.delete(page_url(job, "/lines/p1-l2")).json()["correction"]
    undo = other_api_client.post(f"{JOBS}/{job.pk}/corrections/{edit['id']}/undo")
    assert undo.status_code == 404
    assert PageEdit.objects.get().undone_at is None


def page_xsd():
    """The official PAGE 2019-07-15 schema (tests/ocr_engine/data/README.md says where from)."""
    from pathlib import Path

    from lxml import etree

    data = Path(__file__).resolve().parents[1] / "ocr_engine" / "data"
    return etree.XMLSchema(etree.parse(str(data / "pagecontent-2019-07-15.xsd")))


def test_page_xml_export_validates_and_holds_the_corrected_page(api_client, user):
    from lxml import etree

    job = two_region_job(user)
    api_client.post(page_url(job, "/lines/p1-l1/split"), {"at": 45}, format="json")
    api_client.patch(page_url(job, "/lines/p1-l2"), {"text": "Second line, fixed", "region_id": "p1-r2"},
                     format="json")
    api_client.patch(page_url(job, "/regions/p1-r2"), {"type": "title", "order": 1}, format="json")

    response = api_client.get(f"{JOBS}/{job.pk}/export.page")

    assert response.status_code == 200 and response["Content-Type"].startswith("application/xml")
    document = etree.fromstring(response.content)
    page_xsd().assertValid(document)
    ns = {"pc": "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"}
    lines = [u.text for u in document.findall(".//pc:TextLine/pc:TextEquiv/pc:Unicode", ns)]
    assert lines == ["Second line, fixed", "Hello", "world"]
    order = [r.get("regionRef") for r in document.findall(".//pc:RegionRefIndexed", ns)]
    assert order == ["p1-r2", "p1-r1"]
    assert document.find(".//pc:TextRegion[@id='p1-r2']", ns).get("type") == "heading"


def test_training_set_has_crops_and_labels_of_corrected_lines_only(api_client, user, other_api_client):
    import io
    import zipfile

    from PIL import Image

    job = two_region_job(user)
    api_client.patch(page_url(job, "/lines/p1-l1"), {"text": "Hello, world"}, format="json")  # a retype
    api_client.post(page_url(job, "/lines"), {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]],
                                              "text": "Drawn"}, format="json")

    response = api_client.get("/api/v1/training-set")

    assert response.status_code == 200 and response["Content-Type"] == "application/zip" and response.streaming
    archive = zipfile.ZipFile(io.BytesIO(response.getvalue()))
    labels = archive.read("rec_gt.txt").decode().splitlines()
    assert [row.split("\t")[1] for row in labels] == ["Hello, world", "Drawn"]
    readings = [row.split("\t") for row in archive.read("engine_reading.txt").decode().splitlines()]
    assert [(r[1], r[2]) for r in readings] == [("Hello, world", "Hello world"), ("Drawn", "")]
    crop = Image.open(io.BytesIO(archive.read(labels[1].split("\t")[0])))
    assert crop.size == (50, 7)
    # Nothing of alice's for bob; a later "since" leaves alice's out too.
    nothing = other_api_client.get("/api/v1/training-set")
    assert zipfile.ZipFile(io.BytesIO(nothing.getvalue())).read("rec_gt.txt") == b""
    later = api_client.get("/api/v1/training-set?since=2999-01-01")
    assert zipfile.ZipFile(io.BytesIO(later.getvalue())).read("rec_gt.txt") == b""
    assert api_client.get("/api/v1/training-set?since=yesterday").json()["code"] == "invalid_input"


def test_training_set_streams_a_member_at_a_time_with_every_page_in_it(api_client, user):
    import io
    import zipfile

    job = corrected_job(user, pages=3)

    response = api_client.get("/api/v1/training-set")

    chunks = list(response.streaming_content)
    assert len(chunks) == 4  # a chunk per crop as it is made, then the labels and the directory
    archive = zipfile.ZipFile(io.BytesIO(b"".join(chunks)))
    crops = [f"crops/{job.pk}-p{n}-p{n}-l1.png" for n in (1, 2, 3)]
    assert archive.namelist() == [*crops, "rec_gt.txt", "engine_reading.txt"]
    assert archive.read("rec_gt.txt").decode() == "".join(f"{c}\tHello, page {n}\n" for n, c in enumerate(crops, 1))
    assert archive.testzip() is None


def test_management_command_writes_the_same_zip(api_client, user, tmp_path):
    import zipfile

    from django.core.management import call_command

    job = two_region_job(user)
    api_client.patch(page_url(job, "/lines/p1-l1"), {"text": "Hello, world"}, format="json")

    call_command("ocr_training_set", user="alice", output=str(tmp_path / "set.zip"))

    labels = zipfile.ZipFile(tmp_path / "set.zip").read("rec_gt.txt").decode()
    assert labels == f"crops/{job.pk}-p1-p1-l1.png\tHello, world\n"


def test_cer_report_per_job_and_overall(api_client, user, other_api_client):
    job = two_region_job(user)
    api_client.patch(page_url(job, "/lines/p1-l1"), {"text": "Hello, world"}, format="json")

    report = api_client.get(f"{JOBS}/{job.pk}/cer").json()

    # "Hello, world Second line" (24 characters) vs the engine's "Hello world Second line": 1 edit.
    assert report == {"errors": 1, "characters": 24, "cer": round(1 / 24, 4), "corrected_lines": 1}
    overall = api_client.get("/api/v1/cer").json()
    assert overall["overall"]["cer"] == round(1 / 24, 4) and list(overall["jobs"]) == [str(job.pk)]
    assert other_api_client.get(f"{JOBS}/{job.pk}/cer").status_code == 404
    assert other_api_client.get("/api/v1/cer").json()["jobs"] == {}


def test_cer_counts_a_deleted_line_and_forgets_it_once_the_delete_is_undone(api_client, user):
    job = two_region_job(user)
    delete = api_client.delete(page_url(job, "/lines/p1-l2")).json()

    # The reviewer's page reads "Hello world" (11 characters); the engine added " Second line" (12).
    assert api_client.get(f"{JOBS}/{job.pk}/cer").json() == {
        "errors": 12, "characters": 11, "cer": round(12 / 11, 4), "corrected_lines": 0}

    api_client.post(f"{JOBS}/{job.pk}/corrections/{delete['correction']['id']}/undo")
    assert api_client.get(f"{JOBS}/{job.pk}/cer").json() == {
        "errors": 0, "characters": 23, "cer": 0.0, "corrected_lines": 0}


def test_cer_of_a_dense_page_counts_the_one_corrected_line(api_client, user):
    """900 lines, 30 000 characters: the review page asks for its CER on every visit."""
    lines = [f"Line {n} of a dense page, in words" for n in range(1, 901)]
    job = JobFactory(owner=user)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1, texts=lines))
    services.job_finish(job_id=job.pk, worker_id="w")
    api_client.patch(page_url(job, "/lines/p1-l450"), {"text": "Line 450 of a dense page, in word"}, format="json")

    report = api_client.get(f"{JOBS}/{job.pk}/cer").json()

    assert report == {"errors": 1, "characters": len(" ".join(lines)) - 1,
                      "cer": round(1 / (len(" ".join(lines)) - 1), 4), "corrected_lines": 1}


def test_every_edit_and_undo_is_announced_on_the_job_stream(api_client, user, django_capture_on_commit_callbacks):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    job = two_region_job(user)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"job-{job.pk}", channel)

    with django_capture_on_commit_callbacks(execute=True):
        edit = api_client.delete(page_url(job, "/lines/p1-l2")).json()["correction"]
        api_client.post(f"{JOBS}/{job.pk}/corrections/{edit['id']}/undo")

    async def two_events():  # in one event loop, as a consumer receives (channels-redis cleans up after each)
        return [await layer.receive(channel) for _ in range(2)]

    events = async_to_sync(two_events)()
    assert [(e["event"], e["page_number"], e["correction_id"], e["kind"], e["undone"]) for e in events] == [
        ("corrected", 1, edit["id"], "line_delete", False), ("corrected", 1, edit["id"], "line_delete", True)]


def test_review_queue_lists_open_low_confidence_lines_of_unreviewed_jobs(api_client, user, other_api_client):
    job = two_region_job(user, confidence=0.5)
    confident = two_region_job(user, confidence=0.95)

    before = api_client.get("/api/v1/review-queue?order=open").json()["pages"]
    api_client.patch(page_url(job, "/lines/p1-l1"), {"text": "Hello, world"}, format="json")
    after = api_client.get("/api/v1/review-queue").json()["pages"]

    assert [(row["job"], row["page_number"], row["open_lines"]) for row in before] == [
        (str(job.pk), 1, 2), (str(confident.pk), 1, 0)]
    assert after[0]["open_lines"] == 1 and after[0]["url"] == f"/jobs/{job.pk}/?page=1"
    assert api_client.delete(page_url(job, "/lines/p1-l2")).status_code == 200  # deleted: not open either
    assert api_client.get("/api/v1/review-queue").json()["pages"][0]["open_lines"] == 0
    assert other_api_client.get("/api/v1/review-queue").json()["pages"] == []
    api_client.post(f"{JOBS}/{job.pk}/reviewed")
    assert [row["job"] for row in api_client.get("/api/v1/review-queue").json()["pages"]] == [str(confident.pk)]
    assert api_client.get("/api/v1/review-queue?order=x").status_code == 400


def test_review_queue_page_is_served_to_signed_in_users(client, user):
    assert client.get("/review/").status_code == 302  # to the log-in page
    client.force_login(user)
    response = client.get("/review/")
    assert response.status_code == 200 and b'data-api="/api/v1/review-queue"' in response.content


def test_without_a_worker_a_reread_ends_in_503_and_nothing_is_stored(api_client, user, settings):
    settings.OCR_REREAD_WAIT_MS = 300  # no qcluster runs in this test
    job = two_region_job(user)

    response = api_client.post(page_url(job, "/lines"), {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]]},
                               format="json")

    assert response.status_code == 503 and response.json()["code"] == "engine_unavailable"
    assert not PageEdit.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_pages_read_before_the_review_queue_kept_their_low_lines_have_them_counted(user):
    """Migration 0011 fills the low-confidence line ids of the pages that were stored before it."""
    executor = MigrationExecutor(connection)
    before = [("jobs", "0010_storage_usage")]
    job = two_region_job(user, confidence=0.5)
    executor.migrate(before)
    try:
        old_pages = executor.loader.project_state(before).apps.get_model("jobs", "PageResult")
        page = old_pages.objects.get(job_id=job.pk)
        page.normalized["lines"][0]["confidence"] = 0.97  # now only p1-l2 is under the threshold
        page.save()
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # 0011 and every later one: the models' schema again
    assert PageResult.objects.get(job=job).low_confidence_lines == ["p1-l2"]
