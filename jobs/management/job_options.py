"""The job options as command-line flags, for every management command that submits (``JobOptions``)."""

from __future__ import annotations

import argparse

from jobs.options import OPTION_HELP, JobOptions
from ocr_engine.config import ORIENTATION_MODES, TEXT_LAYER_MODES
from ocr_engine.pipelines import names as pipeline_names

CHOICES = {"pipeline": pipeline_names, "text_layer": lambda: TEXT_LAYER_MODES,
           "orientation": lambda: ORIENTATION_MODES}


def add_job_option_arguments(parser: argparse.ArgumentParser) -> None:
    """``--pipeline``, ``--lang``, ``--text-layer``, ``--orientation``, ``--pages``, ``--webhook-url``: one flag
    per option, its default ``JobOptions``' own."""
    defaults = JobOptions()
    for name in JobOptions.names():
        default = getattr(defaults, name)
        choices = CHOICES[name]() if name in CHOICES else None
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=default, choices=choices,
                            help=f"{OPTION_HELP[name]}" + (f" (default: {default})" if default else ""))

