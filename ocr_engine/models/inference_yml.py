"""``inference.yml``: how PaddleX learns a model folder's name, pre- and post-processing.

PaddleX picks the predictor class from ``Global.model_name`` and reads everything
else (resize, normalisation, label or character lists) from this file, so an
ONNX file from another project runs unchanged once it has a matching YAML.
"""

from __future__ import annotations

import os
from pathlib import Path


def paddlex_config(model_name: str, *, drop_hpi: bool = False) -> dict:
    """PaddleX's own default YAML for ``model_name``, as its exporter would write it.

    ``drop_hpi`` removes the high-performance-inference hints; the notes' verified
    recipes drop them for models whose graph differs from the official one.
    """
    # Imported here: paddlex is slow to import and only ``build`` needs it.
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
    from paddlex.modules.base.utils.pdparams2safetensors.inference_meta import build_inference_meta

    cfg = {"Global": {"model_name": model_name}, **build_inference_meta(model_name)}
    if drop_hpi:
        cfg.pop("Hpi", None)
    return cfg


def write(model_dir: Path, cfg: dict) -> None:
    import yaml

    with open(model_dir / "inference.yml", "w", encoding="utf-8") as f:
        yaml.safe_dump(cfg, f, sort_keys=False, allow_unicode=True)
