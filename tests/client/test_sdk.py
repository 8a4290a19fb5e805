"""The Python SDK against the real stack: submit, wait over the WebSocket, typed results, errors, 429 retries."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from ocr_client import _core
from ocr_client import AsyncClient, BadRequest, Client, Conflict, ConnectionFailed, Job, NotFound, Refused, Result

from jobs.options import JobOptions
from tests.client.conftest import page_pdf, page_png
from tests.e2e.conftest import free_port, web_server
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db]  # django_db: see conftest


@pytest.fixture(scope="module")
def pdf_job(alice):
    """A one-page scanned PDF, submitted and awaited, with every progress report ``wait`` gave."""
    reports = []
    job = alice.submit(page_pdf(), "bridges.pdf", pipeline="ocr", lang="en")
    assert job.status == "queued" and not job.reused
    job.wait(timeout=180, on_progress=reports.append)
    return job, reports


def test_a_pdf_is_read_with_progress_over_the_websocket(pdf_job):
    job, reports = pdf_job
    assert job.status == "succeeded", job.data
    assert {r.via for r in reports} == {"websocket"}
    events = [r.event for r in reports]
    assert events[0] == "state" and events[-1] == "succeeded", events
    page_done = [r for r in reports if r.event == "page_done"]
    assert [(r.page_number, r.pages_done, r.pages_total) for r in page_done] == [(1, 1, 1)]

    result = job.result()
    assert isinstance(result, Result) and result.schema_version.startswith("1.")
    assert "stone bridges" in result.text.lower()
    (page,) = result.pages
    assert page.page_number == 1 and page.width > 0 and page.height > 0
    assert page.lines and page.regions
    region_ids = {region.id for region in page.regions}
    for line in page.lines:
        assert line.region_id in region_ids and len(line.polygon) == 4 and 0 <= line.confidence <= 1
        assert all(x0 < x1 for x0, _, x1, _ in [line.bbox])
    assert sum(len(page.region_lines(r)) for r in region_ids) == len(page.lines)


def test_exports_page_image_and_the_job_list(pdf_job, alice, tmp_path):
    job, _ = pdf_job
    written = job.export("txt", tmp_path / "out" / "bridges.txt")
    assert "stone bridges" in written.read_text().lower()
    assert job.export("md").decode().strip()
    assert job.page_image(1)[:3] == b"\xff\xd8\xff"  # a JPEG
    assert job in list(alice.jobs(status="succeeded"))
    assert job not in list(alice.jobs(status="failed"))


def test_the_same_file_again_is_the_servers_earlier_job(pdf_job, alice):
    job, _ = pdf_job
    again = alice.submit(page_pdf(), "bridges-again.pdf", pipeline="ocr", lang="en")
    assert again.reused and again.id == job.id


def test_corrections_and_search(pdf_job, alice):
    job, _ = pdf_job
    line = job.result().pages[0].lines[0]
    answer = job.edit_line(1, line.id, text="Zanzibar viaduct")
    assert answer.line.text == "Zanzibar viaduct" and answer.line.original_text == line.text
    assert job.page(1).line(line.id).text == "Zanzibar viaduct"
    (hit,) = alice.search("zanzibar")
    assert (hit.job, hit.page, hit.line_id) == (job.id, 1, line.id)
    assert hit.links["review"].startswith(alice.base_url + "/") and f"line={line.id}" in hit.links["review"]
    region = job.page(1).regions[0]
    retyped = job.edit_region(1, region.id, type="title")
    assert next(r for r in retyped.page.regions if r.id == region.id).type == "title"
    assert job.undo(retyped.correction.id).page.regions[0].type == region.type


def test_another_users_token_cannot_read_the_job(pdf_job, bob):
    job, _ = pdf_job
    with pytest.raises(NotFound) as caught:
        bob.job(job.id)
    assert caught.value.code == "not_found" and caught.value.status == 404
    with pytest.raises(NotFound):
        Job(bob, {"id": job.id}).result()
    with pytest.raises(NotFound):
        Job(bob, {"id": job.id}).export("txt")
    assert bob.search("bridges", job=job.id) == []
    assert job.id not in {j.id for j in bob.jobs()}


def test_cancel_retry_and_delete(alice):
    job = alice.submit(samples.report_pdf(pages=3, dpi=40).data, "three.pdf", pipeline="ocr")
    assert job.cancel().status == "canceled"  # queued or running: 3 pages take the worker seconds
    with pytest.raises(Conflict) as caught:
        job.retry()  # only a failed job is retried
    assert caught.value.code == "invalid_state" and caught.value.status == 409
    job.delete()
    with pytest.raises(NotFound):
        job.refresh()


def test_errors_are_typed_with_the_servers_code(alice, live):
    with pytest.raises(Refused) as refused:
        alice.submit(b"plain text, not a document", "notes.txt")
    assert refused.value.code == "unsupported_file_type" and refused.value.status == 415
    with pytest.raises(BadRequest) as bad:
        alice.submit(page_png("Bad language"), "bad.png", lang="xx-nope")
    assert bad.value.code == "unsupported_option"
    with pytest.raises(ConnectionFailed):
        Client(f"http://127.0.0.1:{free_port()}", live.alice.token).job("x")


def test_a_429_is_retried_after_the_servers_retry_after(live, caplog):
    """The server's own submit throttle (SUBMIT_RATE, a fresh user's budget): the third upload in a row is refused
    with 429 and Retry-After; the client waits that long and sends it again."""
    png = page_png("Rate limits")
    with Client(live.url, live.carol.token) as carol, caplog.at_level(logging.WARNING, logger="ocr_client"):
        started = time.monotonic()
        jobs = [carol.submit(png, "rate.png", pipeline="ocr") for _ in range(3)]
        elapsed = time.monotonic() - started
    assert len({job.id for job in jobs}) == 1 and jobs[1].reused and jobs[2].reused
    retries = [r.getMessage() for r in caplog.records if "HTTP 429" in r.getMessage()]
    assert retries and "retrying in 1.0 s" in retries[0], retries
    assert elapsed >= 1.0  # Retry-After: 1 was honoured


def test_the_async_client(pdf_job, live):
    job, _ = pdf_job

    async def read():
        async with AsyncClient(live.url, live.alice.token) as client:
            same = await client.job(job.id)
            await same.wait(timeout=30)
            listed = [j.id async for j in client.jobs(status="succeeded")]
            return same.status, (await same.result()).text, listed

    status, text, listed = asyncio.run(read())
    assert status == "succeeded" and "stone bridges" in text.lower() and job.id in listed


def test_without_websockets_wait_long_polls(live, tmp_path):
    """A server (or a proxy) that does not take WebSockets: uvicorn --ws none, on the same database and worker."""
    reports = []
    with web_server(live.server_env, tmp_path / "web-no-ws.log", "/api/v1/pipelines", "--ws", "none") as url, \
            Client(url, live.alice.token) as client:
        job = client.submit(page_png("Long polls instead"), "polls.png", pipeline="ocr")
        job.wait(timeout=120, on_progress=reports.append)
    assert job.status == "succeeded", job.data
    assert reports and {r.via for r in reports} == {"poll"} and reports[-1].status == "succeeded"


def test_submit_takes_every_job_option_of_the_server():
    assert set(_core.SUBMIT_OPTIONS) == set(JobOptions.names())


def test_the_cli_submit_spells_every_job_option_of_the_server():
    import inspect

    from ocr_client import cli

    chosen = {"pipeline": "ocr", "lang": "de", "text_layer": "ocr", "orientation": "none", "pages": "2",
              "webhook_url": "https://hooks.example.org/ocr", "document_type": "invoice"}
    assert set(chosen) == set(JobOptions.names())
    flags = [item for name, value in chosen.items() for item in (f"--{name.replace('_', '-')}", value)]
    args = cli.parser().parse_args(["submit", "doc.pdf", *flags])
    assert {name: getattr(args, name) for name in chosen} == chosen
    for method in (Client.submit, AsyncClient.submit):
        assert set(JobOptions.names()) <= set(inspect.signature(method).parameters)
