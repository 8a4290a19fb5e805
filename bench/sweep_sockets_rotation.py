"""The sweep's WebSocket-frame and /Rotate probes (``bench/sweep.py``).

* WebSocket frames: a client's frame 16 times the web server's ``--ws-max-size`` (4 KiB) closes its
  socket with 1009 at once, where uvicorn's default took 16 MiB frames and the consumer JSON-parsed them
  on the event loop; a frame within it that is not JSON is dropped, and the socket stays open;
* /Rotate: a born-digital PDF whose pages say ``/Rotate (abc)``, ``45.5``, ``/Ninety``, ``450`` and
  ``-90``, each with text and a picture of text (a "mixed" page): its job ends and its PDF/A export is
  made (200, a PDF).

``fec0::/10`` is among the SSRF targets of ``bench/sweep.py``. A resolver that does not answer cannot be
staged against a running server: that resolution stays inside the download's deadline is tested in
``tests/jobs/test_outbound.py`` and ``tests/jobs/test_webhooks.py``.
"""

from __future__ import annotations

import io
import time

import pikepdf
import requests
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas as pdf_canvas
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.ocr_engine.textlayer_samples import IMAGE_TEXT, text_image

WS_MAX_SIZE = 4096  # as `make run` and docker/ start uvicorn
MESSAGE_TOO_BIG = 1009  # RFC 6455
ROTATIONS = (pikepdf.String("abc"), pikepdf.Object.parse(b"45.5"), pikepdf.Name("/Ninety"), 450, -90)


def websocket_frames(sweep, token: str, job_id: str) -> None:
    url = sweep.url.replace("http", "ws", 1) + f"/ws/jobs/{job_id}/"
    headers = {"Authorization": f"Token {token}"}
    with connect(url, additional_headers=headers, max_size=None, open_timeout=10) as ws:
        ws.recv(timeout=10)  # the job's state
        started = time.monotonic()
        code = None
        try:
            ws.send("x" * (16 * WS_MAX_SIZE))
            ws.recv(timeout=5)
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
        except TimeoutError:
            pass
        seconds = time.monotonic() - started
    sweep.expect("a WebSocket frame of 64 KiB", code == MESSAGE_TOO_BIG and seconds < 2,
                 f"close code {code} after {seconds:.1f} s")
    with connect(url, additional_headers=headers, open_timeout=10) as ws:
        ws.recv(timeout=10)
        ws.send("{not json" + "x" * 1000)
        closed = False
        try:
            ws.recv(timeout=2)  # nothing, or an event of the job: either way the socket lives
        except TimeoutError:
            pass
        except ConnectionClosed:
            closed = True
    sweep.expect("a WebSocket frame that is not JSON is dropped", not closed, "the server closed the socket")


def rotated_pdf_export(sweep, api: requests.Session, timeout: float = 600) -> None:
    reply = api.post(f"{sweep.url}/api/v1/jobs", files={"file": ("rotated.pdf", rotated_pdf())},
                     data={"pipeline": "ocr"}, timeout=60)
    if reply.status_code not in (200, 202):
        sweep.expect("PDF with odd /Rotate values accepted", False, f"HTTP {reply.status_code}: {reply.text[:200]}")
        return
    job_url = f"{sweep.url}/api/v1/jobs/{reply.json()['id']}"
    deadline = time.monotonic() + timeout
    while api.get(job_url, timeout=30).json()["status"] not in ("succeeded", "failed", "canceled"):
        if time.monotonic() > deadline:
            sweep.expect("PDF with odd /Rotate values: job ends", False, f"still active after {timeout:.0f} s")
            return
        time.sleep(2)
    while (export := api.get(f"{job_url}/export.pdf", params={"pdfa": "2b"}, timeout=120)).status_code == 202:
        if time.monotonic() > deadline:
            break
        time.sleep(float(export.headers.get("Retry-After", 2)))
    sweep.expect("PDF/A export of pages with odd /Rotate values",
                 export.status_code == 200 and export.content.startswith(b"%PDF"),
                 f"HTTP {export.status_code}: {export.text[:200]}")


def rotated_pdf() -> bytes:
    """One page per value of ``ROTATIONS``: a line of text above a picture of text."""
    out = io.BytesIO()
    canvas = pdf_canvas.Canvas(out, pagesize=(595, 842))
    picture = text_image((IMAGE_TEXT,))
    for number in range(len(ROTATIONS)):
        canvas.setFont("Helvetica", 14)
        canvas.drawString(72, 760, f"Page {number + 1}: the harbour log for the northern pier")
        canvas.drawImage(ImageReader(picture), 72, 500, 450, 450 * picture.height / picture.width)
        canvas.showPage()
    canvas.save()
    with pikepdf.open(io.BytesIO(out.getvalue())) as pdf:
        for page, rotate in zip(pdf.pages, ROTATIONS):
            page.obj.Rotate = rotate
        turned = io.BytesIO()
        pdf.save(turned)
    return turned.getvalue()
