"""The pipeline registry: every pipeline the engine can run, by name.

A pipeline is one module here exposing ``PIPELINE`` (see ``base.Pipeline``);
the engine, the CLI and ``jobs`` (choices, routing, option checks, the
``/api/v1/pipelines`` route) read everything pipeline-specific from this
registry, so adding a pipeline is adding a module and one line below.
"""

from __future__ import annotations

from ..errors import UnsupportedOption
from . import ocr, structure, vl
from .base import Pipeline

_REGISTRY: dict[str, Pipeline] = {}


def register(pipeline: Pipeline) -> Pipeline:
    """Add (or replace) a pipeline; tests register fakes through this."""
    _REGISTRY[pipeline.name] = pipeline
    return pipeline


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def get(name: str) -> Pipeline:
    """The pipeline called ``name``; ``UnsupportedOption`` when there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnsupportedOption(f"Unknown pipeline {name!r}; choose one of {', '.join(_REGISTRY)}.") from None


def all() -> list[Pipeline]:  # noqa: A001 - the registry's natural verb
    return list(_REGISTRY.values())


def names() -> list[str]:
    return list(_REGISTRY)


for _module in (ocr, structure, vl):
    register(_module.PIPELINE)
