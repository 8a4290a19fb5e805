"""A job's options: one frozen value that every way in builds and hands on whole.

The upload form, the API (jobs, URL jobs, batches), the management commands and the watched folder
all build a ``JobOptions`` from what their user wrote (``JobOptions.of``) and pass it to the
services; the defaults and the check live here and nowhere else. Adding an option is a field here
(with its default and, where it has one, its check) plus its spelling at each entry point:
``OPTION_HELP`` gives those spellings their one description.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from jobs.engines.config import engine_config
from jobs.urlguard import check_public_url
from ocr_engine import pipelines
from ocr_engine.config import DEFAULT_LANG, DEFAULT_PIPELINE, ORIENTATION_MODES, TEXT_LAYER_MODES
from ocr_engine.errors import GpuRequired, PageOutOfRange
from ocr_engine.inputs.pages import parse_page_range

# What each option means, for forms, serializers, command-line flags and API docs.
OPTION_HELP = {
    "pipeline": "the reading pipeline (GET /api/v1/pipelines lists them)",
    "lang": "the language of the text (docs/languages.md)",
    "text_layer": "auto: use a PDF's own text where usable; ocr: OCR every page",
    "orientation": "auto: turn and deskew pages; none: pages are upright",
    "pages": "page range such as 1-3,7 (default: all)",
    "webhook_url": "a public http(s) URL told when the job ends (default: the user's own)",
    "document_type": "the id or name of one of your document types (default: classify the document)",
}


@dataclasses.dataclass(frozen=True)
class JobOptions:
    """What a user chose for a job. Every field has the default a user who says nothing gets."""

    pipeline: str = DEFAULT_PIPELINE
    lang: str = DEFAULT_LANG
    text_layer: str = TEXT_LAYER_MODES[0]
    orientation: str = ORIENTATION_MODES[0]
    pages: str = ""  # all pages
    webhook_url: str = ""  # the owner's default webhook, if any (jobs.services.submission)
    # One of the owner's document types, by id or name (jobs.services.job_types resolves it: the owner is
    # known there); empty: the fields stage classifies the document.
    document_type: str = ""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in dataclasses.fields(cls))

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> JobOptions:
        """The options in ``values`` (a form's, a serializer's or a command line's): a name that is missing,
        None or blank takes its default; other keys are not options and are left alone."""
        given = {name: str(values[name]).strip() for name in cls.names()
                 if values.get(name) is not None and str(values[name]).strip() != ""}
        return cls(**given)

    def check(self) -> None:
        """Raise an OcrError for options that no file could make right: options this server cannot run
        (UnsupportedOption / GpuRequired), a page range's syntax, a webhook URL that is not public."""
        # The registry knows the pipelines, EngineConfig checks every other engine option.
        engine_config(self.pipeline, self.lang).with_(text_layer=self.text_layer, orientation=self.orientation)
        if pipelines.get(self.pipeline).needs_gpu and not settings.OCR_GPU_CLUSTER:
            raise GpuRequired(f"The {self.pipeline} pipeline needs a GPU worker cluster, and this server has none "
                              "(OCR_GPU_CLUSTER).")
        if self.webhook_url:
            check_public_url(self.webhook_url)
        try:  # the range's syntax; whether its pages exist waits for the file
            parse_page_range(self.pages, settings.OCR_MAX_PAGES)
        except PageOutOfRange:
            pass

    def with_(self, **changes) -> JobOptions:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    def engine_options(self) -> dict[str, str]:
        """The options that change what the engine reads (and so which jobs are the same work)."""
        return {"pipeline": self.pipeline, "lang": self.lang, "text_layer": self.text_layer,
                "orientation": self.orientation}
