"""python manage.py ocr_submit FILE: queue a job, follow it with a progress bar, print where the result is."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse
from tqdm import tqdm

from jobs.management.job_options import add_job_option_arguments
from jobs.options import JobOptions
from jobs.models import Job
from jobs.services import job_create
from ocr_engine import exports
from ocr_engine.errors import OcrError

POLL_SECONDS = 0.5


class Command(BaseCommand):
    help = "Queue an OCR job for FILE and wait for it (a worker must be running: manage.py qcluster)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        add_job_option_arguments(parser)
        parser.add_argument("--user", default=None, help="owner's username (default: the only superuser)")
        parser.add_argument("--no-wait", action="store_true", help="queue and exit")
        parser.add_argument("--timeout", type=float, default=None, help="give up waiting after this many seconds")

    def handle(self, *args, **options):
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        owner = self._owner(options["user"])
        try:
            job, reused = job_create(owner=owner, file=path, filename=path.name, options=JobOptions.of(options))
        except OcrError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from None
        self.stdout.write(f"Job {job.id} {'(reused: same file and options)' if reused else 'queued'} "
                          f"on the {job.cluster} cluster, {job.pages_total} page(s).")
        if not options["no_wait"]:
            job = self._follow(job, options["timeout"])
        self._print_links(job)
        if job.status == Job.Status.FAILED:
            raise CommandError(f"Job failed: [{job.error_code}] {job.error_detail}")
        if job.status == Job.Status.CANCELED:
            raise CommandError("Job was canceled.")

    def _owner(self, username: str | None):
        users = get_user_model().objects
        if username:
            try:
                return users.get(username=username)
            except users.model.DoesNotExist:
                raise CommandError(f"No user {username!r}.") from None
        superusers = list(users.filter(is_superuser=True)[:2])
        if len(superusers) != 1:
            raise CommandError("Pass --user USERNAME (there is not exactly one superuser).")
        return superusers[0]

    def _follow(self, job: Job, timeout: float | None) -> Job:
        deadline = time.monotonic() + timeout if timeout else None
        with tqdm(total=job.pages_total, unit="page", desc=job.status, file=sys.stderr) as bar:
            while True:
                job.refresh_from_db()
                bar.set_description(job.status)
                bar.update(job.pages_done - bar.n)
                if job.is_final:
                    return job
                if deadline and time.monotonic() > deadline:
                    raise CommandError(f"Still {job.status} after {timeout:g} s; follow it at {self._url(job)}")
                time.sleep(POLL_SECONDS)

    def _url(self, job: Job, name: str = "api:job-detail", **kwargs) -> str:
        return settings.OCR_PUBLIC_URL + reverse(name, kwargs={"pk": job.pk, **kwargs})

    def _print_links(self, job: Job) -> None:
        self.stdout.write(f"Status:  {job.status}")
        self.stdout.write(f"Job:     {self._url(job)}")
        self.stdout.write(f"Result:  {self._url(job, 'api:job-result')}")
        for fmt in exports.FORMATS:
            self.stdout.write(f"Export:  {self._url(job, 'api:job-export', fmt=fmt)}")
        self.stdout.write("(API requests need the header 'Authorization: Token <your token>'.)")
