"""python manage.py ocr_storage_copy --to s3://bucket/prefix: this site's stored files into an S3 store."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from jobs.services.storage_copy import CopyMismatch, storage_copy


class Command(BaseCommand):
    help = ("Copy the originals and page images of this site's storage to an S3-compatible store, verified by "
            "SHA-256; run it again to resume or to catch up, then set STORAGE_URL to the same URL. The store's "
            "endpoint and credentials are read as the site reads them (S3_ENDPOINT_URL, S3_REGION, AWS_*).")

    def add_arguments(self, parser):
        parser.add_argument("--to", required=True, help="s3://bucket/prefix, as STORAGE_URL will name it")

    def handle(self, *args, to, **options):
        try:
            tally = storage_copy(to=to, report=lambda line: self.stdout.write(line) if options["verbosity"] > 1
                                 else None)
        except (ImproperlyConfigured, CopyMismatch) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{tally.copied} copied, {tally.already_there} already there, "
                          f"{tally.missing} missing here.")
        if tally.missing:
            raise CommandError(f"{tally.missing} file(s) named by the database are missing from this site's storage "
                               "(run with -v 2 to list them).")
