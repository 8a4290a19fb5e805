"""``python manage.py ocr_purge [--dry-run]``: remove the jobs past their retention now (jobs.services.retention),
as the hourly schedule does; ``--dry-run`` only says which would go and how many bytes that gives back."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from jobs.services.retention import retention_purge


class Command(BaseCommand):
    help = "Delete the jobs past their retention (OCR_RETENTION_DAYS, per-user overrides); --dry-run lists them."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="delete nothing: report what would go")

    def handle(self, *args, dry_run: bool, **options):
        purge = retention_purge(dry_run=dry_run)
        what = "original and page images of " if purge.keep_results else ""
        verb = "Would remove" if dry_run else "Removed"
        for job_id in purge.job_ids:
            self.stdout.write(job_id)
        self.stdout.write(f"{verb} the {what}{len(purge.job_ids)} expired job(s): {purge.freed_bytes} bytes.")
        if not settings.OCR_RETENTION_DAYS:
            self.stdout.write("OCR_RETENTION_DAYS is not set: only users with their own retention expire.")
