"""One warm OCR engine per (pipeline, lang) in each worker process.

Loading PaddleOCR takes seconds and ~2 GB, so a worker builds an engine on its
first job and keeps it for the next ones. At most ``MAX_ENGINES`` stay loaded:
a worker that sees many languages evicts the least recently used one instead
of growing until ``max_rss`` recycles it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from jobs.engines.config import engine_config

MAX_ENGINES = 2

_engines: OrderedDict[tuple[str, str], object] = OrderedDict()
_lock = threading.Lock()


def get_engine(pipeline: str, lang: str, **page_options):
    """The process's engine for these options, built on first use (slow) and then reused.

    ``page_options`` (``ocr_engine.config.PAGE_OPTIONS``, e.g. ``orientation``) do
    not change the models: they give a view of the cached engine, never a second load.
    """
    # PaddleOCR loads when an Engine is built, which only workers do; web processes
    # import ocr_engine (results.py assembles documents) but never build one.
    from ocr_engine.engine import Engine

    key = (pipeline, lang)
    with _lock:
        if key in _engines:
            _engines.move_to_end(key)
        else:
            while len(_engines) >= MAX_ENGINES:
                _engines.popitem(last=False)
            _engines[key] = Engine(engine_config(pipeline, lang))
        engine = _engines[key]
    return engine.with_options(**page_options) if page_options else engine
