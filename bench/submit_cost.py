"""What one ``POST /api/v1/jobs`` costs the web process, measured without the network or other clients.

    .venv/bin/python bench/submit_cost.py                  # CPU ms per submission, 300 submissions
    .venv/bin/python bench/submit_cost.py --instructions   # + instructions per submission (valgrind)

Submissions of distinct one-page PNGs (the pages of ``bench/load.py``) go one after another through the
ASGI application (``ocrsite.asgi``: middleware, DRF, the service, the answer) in this process, on a
scratch embedded database and media folder in a temporary directory; nothing of ``var/`` is touched.

CPU time on a shared 2-vCPU VM moved by 30% between runs minutes apart, more than most changes to the
submit path, so ``--instructions`` also counts instructions with callgrind: the same script is run
under valgrind with 10 and with 40 submissions, and the difference is divided by 30. Three such counts
of the same code spread over 4% (16.3, 16.7 and 17.0 M; the threads' interleaving still varies),
against 30% for CPU time. The count leaves out the kernel's time (the file's creation, SQLite's writes) and the
HTTP server's (it parses and answers outside the application: daphne's took about an eighth more). It overstates two
cheap parts: valgrind hides the CPU's SHA instructions, so the upload's SHA-256 runs in OpenSSL's software
code (about 28 instructions a byte: 2.3 M of 13.4 M for the bench's page, which the CPU hashes in 0.06 ms),
and each byte that ``rep movsb`` copies counts as one (about 1 M).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

WARM_SUBMISSIONS = 20  # the first requests of a process build caches and connections


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submits", type=int, default=300)
    parser.add_argument("--instructions", action="store_true", help="also count instructions with valgrind")
    parser.add_argument("--pipeline", default="ocr")
    parser.add_argument("--queued", type=int, default=0,
                        help="jobs of the same user submitted (and left queued) before the measured ones")
    parser.add_argument("--prepare", type=int, default=0, help=argparse.SUPPRESS)  # see instructions_per_submission
    return parser.parse_args()


def scratch_site(scratch: Path) -> None:
    """Point the settings at a scratch embedded site before Django starts."""
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "ocrsite.settings.base",
        "DATABASE_URL": f"sqlite:///{scratch / 'db.sqlite3'}",
        "MEDIA_ROOT": str(scratch / "media"),
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1",
        "METRICS_PUBLIC": "true",  # a scratch site nobody scrapes
        "API_THROTTLE_SUBMIT": "1000000/min",
        "API_THROTTLE_USER": "1000000/min",
        "OCR_QUOTA_PAGES_PER_DAY": "0",
        "LOG_LEVEL": "WARNING",  # a log line per submission would be measured too
    })


def submissions(count: int, token: str, pipeline: str) -> list[tuple[dict, bytes]]:
    """ASGI scopes and bodies of ``count`` multipart submissions of distinct pages."""
    from urllib3 import encode_multipart_formdata

    from bench.load import pages

    images = pages(min(count, 30), 200, "cost")
    out = []
    for n in range(count):
        # Bytes after a PNG's end are ignored by readers and make every file (and its hash) distinct.
        data = images[n % len(images)] + f"#{n}".encode()
        body, content_type = encode_multipart_formdata({"file": ("page.png", data), "pipeline": pipeline})
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/api/v1/jobs", "raw_path": b"/api/v1/jobs", "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Token {token}".encode()),
                        (b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000),
        }
        out.append((scope, body))
    return out


async def submit(application, scope: dict, body: bytes) -> None:
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent = []

    async def receive():
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # the client never disconnects

    async def send(message):
        sent.append(message)

    await application(scope, receive, send)
    if sent[0]["status"] != 202:
        raise SystemExit(f"submission answered HTTP {sent[0]['status']}: {sent[-1].get('body', b'')[:200]!r}")


def measure(count: int, pipeline: str, queued: int = 0, prepare: int = 0) -> float:
    """CPU seconds of this process per submission, over ``count`` submissions after ``queued`` + the warm-up."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from ocrsite.asgi import application

    user = get_user_model().objects.create_user("bench-submit")
    ahead = queued + WARM_SUBMISSIONS
    work = submissions(ahead + max(count, prepare), Token.objects.create(user=user).key, pipeline)[:ahead + count]

    async def run() -> float:
        for scope, body in work[:ahead]:
            await submit(application, scope, body)
        cpu = time.process_time()
        for scope, body in work[ahead:]:
            await submit(application, scope, body)
        return time.process_time() - cpu

    return asyncio.run(run()) / max(count, 1)


def instructions_per_submission(pipeline: str, queued: int) -> float:
    """Instructions (callgrind's Ir) per submission: runs of 10 and 40 submissions, subtracted.

    Both runs build the same 40 requests, so that only the submissions differ between them.
    """
    totals = {}
    with tempfile.TemporaryDirectory() as out:
        for count in (10, 40):
            profile = Path(out) / f"callgrind.{count}"
            command = [sys.executable, __file__, "--submits", str(count), "--pipeline", pipeline,
                       "--queued", str(queued), "--prepare", "40"]
            # A fixed string hash seed: dicts and sets then grow and collide alike in both runs.
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", *command],
                           env={**os.environ, "PYTHONHASHSEED": "0"},
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            totals[count] = int(re.search(r"^(?:summary|totals): (\d+)", profile.read_text(), re.M).group(1))
    return (totals[40] - totals[10]) / 30


def main() -> None:
    args = parse_args()
    if args.instructions and not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    scratch = Path(tempfile.mkdtemp(prefix="ocr-submit-cost-"))
    try:
        scratch_site(scratch)
        seconds = measure(args.submits, args.pipeline, args.queued, args.prepare)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"submit through the ASGI application: {seconds * 1000:.2f} ms CPU per submission ({args.submits} "
          f"submissions, {args.queued} queued before; Python {sys.version.split()[0]}, {sys.executable})", flush=True)
    if args.instructions:
        count = instructions_per_submission(args.pipeline, args.queued)
        print(f"instructions per submission: {count / 1e6:.2f} M (callgrind, user space)", flush=True)


if __name__ == "__main__":
    main()
