"""``GET /api/v1/jobs/{id}?wait=``: one request that answers when the job ends, instead of polling.

On the embedded default (`make run`: SQLite, a real worker and the web server), where the web process's
watcher of awaited jobs (``jobs.waits``) sees the worker's commit of the job's end.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests

from tests.e2e.conftest import embedded_default
from tests.jobs.helpers import small_png
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models]


def test_a_waiting_request_answers_when_the_job_ends(tmp_path):
    with embedded_default(tmp_path) as (base, token, _manage, _env):
        api, headers = f"{base}/api/v1", {"Authorization": f"Token {token}"}
        for bad in ("soon", "-1", "600"):
            refused = requests.get(f"{api}/jobs/00000000-0000-0000-0000-000000000000?wait={bad}", headers=headers,
                                   timeout=10)
            assert refused.status_code == 400 and "wait" in refused.text, refused.text

        submitted = requests.post(f"{api}/jobs", headers=headers, files={"file": ("note.png", small_png())},
                                  data={"pipeline": "ocr"}, timeout=30)
        assert submitted.status_code == 202, submitted.text
        answers: dict = {}

        def wait() -> None:
            t0 = time.monotonic()
            answers["job"] = requests.get(f"{api}/jobs/{submitted.json()['id']}?wait=45", headers=headers, timeout=60)
            answers["seconds"] = time.monotonic() - t0

        waiting = threading.Thread(target=wait)
        waiting.start()
        time.sleep(0.2)
        # The server answers others while the request waits.
        t0 = time.monotonic()
        assert requests.get(f"{base}/healthz", timeout=10).status_code == 200
        assert time.monotonic() - t0 < 1
        waiting.join(60)
        job = answers["job"].json()
        assert answers["job"].status_code == 200 and job["status"] == "succeeded", job
        assert job["progress"]["pages_done"] == 1 and answers["seconds"] < 40

        # A job canceled while a client waits for it: the answer comes at once, canceled.
        long = requests.post(f"{api}/jobs", headers=headers, timeout=30, data={"pipeline": "ocr"},
                             files={"file": ("long.pdf", samples.report_pdf(pages=12, dpi=100).data)})
        assert long.status_code == 202, long.text
        waiting = threading.Thread(target=lambda: answers.update(
            long=requests.get(f"{api}/jobs/{long.json()['id']}?wait=45", headers=headers, timeout=60)))
        waiting.start()
        time.sleep(1)
        canceled_at = time.monotonic()
        assert requests.post(f"{api}/jobs/{long.json()['id']}/cancel", headers=headers, timeout=10).ok
        waiting.join(60)
        assert answers["long"].json()["status"] == "canceled"
        assert time.monotonic() - canceled_at < 5
