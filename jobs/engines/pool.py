"""One warm OCR engine per (pipeline, lang) in each worker process.

Loading PaddleOCR takes seconds and ~2 GB, so a worker builds an engine on its
first job and keeps it for the next ones. At most ``MAX_ENGINES`` stay loaded:
a worker that sees many languages evicts the least recently used one instead
of growing until ``max_rss`` recycles it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from jobs.engines.config import engine_config

MAX_ENGINES = 2

_engines: OrderedDict[tuple[str, str], object] = OrderedDict()
_lock = threading.Lock()
_threads: dict[str, ThreadPoolExecutor] = {}
_threads_lock = threading.Lock()


def engine_thread() -> ThreadPoolExecutor:
    """The one thread of this process that builds and runs engines.

    A worker reads a page there while it stores the previous one
    (jobs.services.processing). Always the same thread: Paddle keeps state per
    thread (its dygraph tracer, the device), which a model built on one thread
    does not find on another.
    """
    return _thread("engine")


def image_thread() -> ThreadPoolExecutor:
    """The thread of this process that encodes page images while the engine reads them
    (jobs.services.pages): the time OCR leaves a core idle, not the job's, pays for them."""
    return _thread("image")


def _thread(name: str) -> ThreadPoolExecutor:
    # Made on first use, so in the forked worker itself.
    with _threads_lock:
        if name not in _threads:
            _threads[name] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        return _threads[name]


def _forget_threads() -> None:
    # A forked child has none of its parent's threads: an inherited executor would queue forever.
    _threads.clear()


os.register_at_fork(after_in_child=_forget_threads)


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
            _engines[key] = engine_thread().submit(Engine, engine_config(pipeline, lang)).result()
        engine = _engines[key]
    return engine.with_options(**page_options) if page_options else engine
