"""Management commands: ocr_bootstrap (once) and ocr_submit (error path and --no-wait)."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from jobs.models import Job
from tests.jobs.helpers import small_png

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_bootstrap_creates_admin_and_token_once():
    first = run("ocr_bootstrap")
    admin = get_user_model().objects.get(username="admin")
    token = Token.objects.get(user=admin)
    password = first.split("password:")[1].split()[0]

    assert admin.is_superuser and admin.check_password(password)
    assert token.key in first
    second = run("ocr_bootstrap")
    assert "nothing to do" in second and password not in second and token.key not in second
    assert get_user_model().objects.count() == 1


def test_submit_queues_and_prints_links(tmp_path, user):
    path = tmp_path / "scan.png"
    path.write_bytes(small_png())

    out = run("ocr_submit", str(path), "--pipeline", "ocr", "--user", "alice", "--no-wait")

    job = Job.objects.get()
    assert job.owner == user and job.pipeline == "ocr" and job.document.original_name == "scan.png"
    assert f"/api/v1/jobs/{job.pk}/result" in out and f"/api/v1/jobs/{job.pk}/export.md" in out


def test_submit_reports_input_errors_with_their_code(tmp_path, user):
    path = tmp_path / "notes.txt"
    path.write_text("not a document")
    with pytest.raises(CommandError, match=r"\[unsupported_file_type\]"):
        run("ocr_submit", str(path), "--user", "alice")
    with pytest.raises(CommandError, match="Pass --user"):
        run("ocr_submit", str(path))
    assert not Job.objects.exists()
