"""python manage.py ocr_training_set --user NAME [--since DATE] [-o FILE]: the training ZIP of GET /training-set."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jobs.api.training import parse_since
from jobs.services.training_set import training_zip_chunks
from ocr_engine.errors import InputError


class Command(BaseCommand):
    help = "Write corrected line crops + rec_gt.txt (PaddleOCR recognition training format) as a ZIP."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="whose reviewed jobs")
        parser.add_argument("--since", help="ISO date or date-time: corrections made at or after it")
        parser.add_argument("-o", "--output", default="training-set.zip", help="ZIP file to write")

    def handle(self, *args, user, since, output, **options):
        try:
            owner = get_user_model().objects.get(username=user)
            chunks = training_zip_chunks(owner, parse_since(since))
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user {user!r}.") from None
        except InputError as exc:
            raise CommandError(exc.message) from None
        with Path(output).open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            size = fh.tell()
        self.stdout.write(f"Wrote {output} ({size} bytes).")
