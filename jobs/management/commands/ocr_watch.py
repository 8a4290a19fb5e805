"""manage.py ocr_watch IN_DIR --out OUT_DIR --user U: files dropped into IN_DIR become jobs (jobs.services.watch)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jobs.management.job_options import add_job_option_arguments
from jobs.options import JobOptions
from jobs.services.job_types import document_type_named
from jobs.services.watch import FORMATS, WatchOptions, watch_options_check, watch_run
from jobs.services.watch_files import UnsafeFolder
from ocr_engine.errors import OcrError


class Command(BaseCommand):
    help = ("Watch IN_DIR: submit each file once it stops growing, write its job's exports to OUT_DIR, "
            "move it to IN_DIR/done/ (or IN_DIR/failed/ with <name>.error.txt). A worker must be running.")

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path, metavar="IN_DIR")
        parser.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
        parser.add_argument("--user", required=True, help="username the jobs are submitted as")
        add_job_option_arguments(parser)
        parser.add_argument("--format", default="pdf,txt",
                            help=f"comma-separated exports to write, of: {', '.join(FORMATS)} (default: pdf,txt)")
        parser.add_argument("--settle-seconds", type=float, default=2.0,
                            help="a file is taken once its size and mtime stayed the same this long")
        parser.add_argument("--poll", action="store_true",
                            help="poll the folder instead of inotify (network shares, some volumes); "
                                 "WATCHFILES_FORCE_POLLING=true does the same")

    def handle(self, *args, **options):
        folder, out = options["folder"].resolve(), options["out"].resolve()
        if not folder.is_dir():
            raise CommandError(f"No such folder: {folder}")
        if out == folder or out.is_relative_to(folder):
            raise CommandError("OUT_DIR must not be inside IN_DIR.")
        users = get_user_model().objects
        try:
            owner = users.get(username=options["user"])
        except users.model.DoesNotExist:
            raise CommandError(f"No user {options['user']!r}.") from None
        formats = tuple(fmt.strip() for fmt in options["format"].split(",") if fmt.strip())
        try:
            watch_options_check(formats)
            job_options = JobOptions.of(options)
            job_options.check()
            document_type_named(owner=owner, options=job_options)
        except OcrError as exc:
            raise CommandError(f"[{exc.code}] {exc.message}") from None
        out.mkdir(parents=True, exist_ok=True)
        self.stdout.write(f"Watching {folder} for {owner.username}; exports ({', '.join(formats)}) to {out}.")
        try:
            watch_run(WatchOptions(folder=folder, out=out, owner=owner, job_options=job_options, formats=formats,
                                   settle_seconds=options["settle_seconds"]),
                      force_polling=True if options["poll"] else None)
        except UnsafeFolder as exc:
            raise CommandError(str(exc)) from None
