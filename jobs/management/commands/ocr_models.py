"""``python manage.py ocr_models list|verify|install``: the OCR models of this deployment.

The offline pack lives in ``OCR_MODELS_DIR`` and is built by
``ocr_engine.models.build_pack`` from files PyPI wheels ship; the official
PaddleOCR models are downloaded by PaddleOCR itself into PaddleX's cache
(``PADDLE_PDX_CACHE_HOME``). ``verify`` runs the same check a qcluster worker
runs before it starts (jobs/worker.py).
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django_q.conf import Conf

from jobs.engines.config import engine_config, models_dir
from jobs.engines.health import model_problems, official_models_dir
from ocr_engine.pipelines import names as pipeline_names
from ocr_engine.models import MODEL_DIRS, build_pack, pack_status
from ocr_engine.models.table import BuildToolMissing


class Command(BaseCommand):
    help = "List, verify (checksums) or install the OCR models (offline pack, or the official models when online)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        ls = sub.add_parser("list", help="each model of the offline pack with its state, and the official models")
        ls.add_argument("--json", action="store_true", dest="as_json")
        verify = sub.add_parser("verify", help="check the models a worker needs (checksums); exit 1 on a problem")
        verify.add_argument("--cluster", default=None,
                            help="the cluster whose pipelines to check (default: Q_CLUSTER_NAME, else cpu)")
        install = sub.add_parser("install", help="build the offline pack into OCR_MODELS_DIR (or --official)")
        install.add_argument("--force", action="store_true", help="rebuild folders that already verify")
        install.add_argument("--model", action="append", choices=MODEL_DIRS, help="only this folder (repeatable)")
        install.add_argument("--official", action="store_true",
                             help="download PaddleOCR's official models instead (needs internet), by building "
                                  "each pipeline once")
        install.add_argument("--pipeline", action="append", choices=pipeline_names(),
                             help="with --official: pipelines to download (repeatable; default ocr and structure)")
        install.add_argument("--lang", action="append",
                             help="with --official: languages to download (repeatable; default en)")

    def handle(self, *args, action, **options):
        {"list": self.list_models, "verify": self.verify, "install": self.install}[action](**options)

    def list_models(self, *, as_json: bool = False, **_):
        pack = settings.OCR_MODELS_DIR
        rows = [{"dir": name, "status": state} for name, state in pack_status(pack).items()]
        official = official_models_dir()
        downloaded = sorted(p.name for p in official.iterdir() if p.is_dir()) if official.is_dir() else []
        if as_json:
            self.stdout.write(json.dumps({"pack": str(pack), "models": rows, "official_dir": str(official),
                                          "official": downloaded}, indent=2))
            return
        self.stdout.write(f"Offline pack in {pack}:")
        for row in rows:
            self.stdout.write(f"  {row['dir']:<32} {row['status']}")
        self.stdout.write(f"Official models in {official}: {', '.join(downloaded) or 'none'}")

    def verify(self, *, cluster: str | None = None, **_):
        cluster = cluster or Conf.CLUSTER_NAME
        problems = model_problems(cluster)
        if problems:
            raise CommandError(f"The {cluster} workers' models have {len(problems)} problem(s):\n  "
                               + "\n  ".join(problems))
        pack = models_dir()
        where = f"offline pack {pack}" if pack else f"official models in {official_models_dir()}"
        self.stdout.write(self.style.SUCCESS(f"ok: the {cluster} workers' models ({where})"))

    def install(self, *, official: bool, force: bool, model: list[str] | None, pipeline: list[str] | None,
                lang: list[str] | None, **_):
        started = time.monotonic()
        if official:
            self.install_official(pipeline or ["ocr", "structure"], lang or ["en"])
        else:
            try:
                result = build_pack(settings.OCR_MODELS_DIR, names=model, force=force, log=self.stderr.write)
            except BuildToolMissing as exc:
                raise CommandError(str(exc)) from exc
            built = sum(state == "built" for state in result.values())
            self.stdout.write(f"{settings.OCR_MODELS_DIR}: {built} built, {len(result) - built} up to date")
        self.stdout.write(f"done in {time.monotonic() - started:.0f} s")

    def install_official(self, pipelines: list[str], langs: list[str]) -> None:
        # Building an engine without a pack makes PaddleOCR download each model it
        # lacks into PaddleX's cache; later workers find them there, offline.
        from ocr_engine.engine import Engine

        for pipeline in pipelines:
            for lang in langs:
                self.stderr.write(f"downloading the official models of {pipeline} ({lang}) ...")
                Engine(engine_config(pipeline, lang).with_(models_dir=None))
        self.stdout.write(f"official models in {official_models_dir()}")

