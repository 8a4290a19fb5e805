"""The offline model pack: build, checksums, idempotency, licences, and that the models really work.

A pack is built from scratch into a temporary folder once per session (a few
seconds). SLANet_plus needs the paddle2onnx build venv; where that venv is
absent (a machine whose pack was built earlier), its checks run on the pack at
$OCR_MODELS_DIR that `make models` built instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image, ImageDraw, ImageFont

from ocr_engine.errors import ModelsMissing
from ocr_engine.models import MODEL_DIRS, REQUIRED_DIRS, build_pack, offline_model_kwargs, pack_status, verify_pack
from ocr_engine.models.pack import BY_DIR, BuildContext, default_context
from ocr_engine.models.paddlex_names import STRUCTURE_PREDICT_KWARGS
from ocr_engine.models.table import BuildToolMissing

os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")

FONTS = Path("/usr/share/fonts/truetype/dejavu")
WITHOUT_TOOLS = [d for d in MODEL_DIRS if d != "SLANet_plus_onnx"]
TABLE = [["Region", "Revenue", "Growth"], ["North", "1,250", "15%"], ["South", "980", "8%"], ["East", "1,100", "11%"]]


@pytest.fixture(scope="session")
def fresh_pack(tmp_path_factory) -> Path:
    """Every folder built from scratch; SLANet too when the build venv is there."""
    out = tmp_path_factory.mktemp("pack")
    names = MODEL_DIRS if default_context().build_python.exists() else WITHOUT_TOOLS
    build_pack(out, names=names, log=lambda _msg: None)
    return out


@pytest.fixture(scope="session")
def table_pack(fresh_pack) -> Path:
    """A pack holding SLANet_plus_onnx: the fresh one, else the one `make models` built."""
    if (fresh_pack / "SLANet_plus_onnx").is_dir():
        return fresh_pack
    shipped = os.environ.get("OCR_MODELS_DIR")
    if not shipped or verify_pack(Path(shipped), names=["SLANet_plus_onnx"]):
        pytest.fail("SLANet_plus_onnx: neither the build venv (.venv-build) nor a built pack at $OCR_MODELS_DIR; "
                    "run `make models`")
    return Path(shipped)


@pytest.fixture
def pack_copy(fresh_pack, tmp_path) -> Path:
    """A throw-away copy for tests that damage the pack."""
    return Path(shutil.copytree(fresh_pack, tmp_path / "pack"))


def _models_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ocr_engine", "models", *args],
                          capture_output=True, text=True, timeout=120)


def _report_page(dpi: int = 150) -> tuple[Image.Image, dict[str, tuple[float, float, float, float]]]:
    """An A4 page: a bold title, two paragraphs and a ruled 4x3 table; returns where each was drawn."""
    k = dpi / 72.0  # points -> pixels
    img = Image.new("RGB", (round(8.27 * dpi), round(11.69 * dpi)), "white")
    d = ImageDraw.Draw(img)
    title = "Quarterly Report on Regional Sales"
    title_font = ImageFont.truetype(str(FONTS / "DejaVuSans-Bold.ttf"), int(20 * k))
    d.text((72 * k, 72 * k), title, font=title_font, fill="black")
    where = {"title": d.textbbox((72 * k, 72 * k), title, font=title_font)}
    body_font = ImageFont.truetype(str(FONTS / "DejaVuSerif.ttf"), int(11 * k))
    y = 120
    for para in ("The first quarter showed steady growth across all regions. Revenue increased by twelve percent "
                 "compared with the same period last year, driven mainly by strong demand for the new product line.",
                 "Operating costs remained under control despite higher shipping prices. The team expects the "
                 "second quarter to continue this trend, although supplier delays could reduce margins."):
        for line in textwrap.wrap(para, 80):
            d.text((72 * k, y * k), line, font=body_font, fill="black")
            y += 16
        y += 12
    y += 20
    cell_font = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), int(11 * k))
    for r, row in enumerate(TABLE):
        for c, text in enumerate(row):
            x0, y0 = (72 + c * 130) * k, (y + r * 24) * k
            d.rectangle([x0, y0, x0 + 130 * k, y0 + 24 * k], outline="black", width=2)
            d.text((x0 + 6 * k, y0 + 6 * k), text, font=cell_font, fill="black")
    where["table"] = (72 * k, y * k, (72 + 3 * 130) * k, (y + 4 * 24) * k)
    return img, where


def _iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _bgr(img: Image.Image) -> np.ndarray:
    return np.ascontiguousarray(np.array(img)[:, :, ::-1])


# --- build, verify, idempotency -------------------------------------------------------------


def test_fresh_pack_verifies_and_every_folder_is_a_paddlex_model(fresh_pack):
    assert verify_pack(fresh_pack) == []
    for name in WITHOUT_TOOLS:
        cfg = yaml.safe_load((fresh_pack / name / "inference.yml").read_text(encoding="utf-8"))
        assert (fresh_pack / name / "inference.onnx").stat().st_size > 0
        assert cfg["Global"]["model_name"] == BY_DIR[name].model_name
    rec = yaml.safe_load((fresh_pack / "PP-OCRv6_small_rec" / "inference.yml").read_text(encoding="utf-8"))
    assert len(rec["PostProcess"]["character_dict"]) > 18000  # from the ONNX metadata, not PaddleX's missing file
    layout = yaml.safe_load((fresh_pack / "PicoDet_layout_1x" / "inference.yml").read_text(encoding="utf-8"))
    assert {"paragraph_title", "text", "table", "image", "formula"} <= set(layout["label_list"])


def test_second_build_is_a_fast_no_op(fresh_pack):
    before = {p: p.stat().st_mtime_ns for p in fresh_pack.rglob("*") if p.is_file() and p.name != ".build.lock"}
    started = time.monotonic()
    result = build_pack(fresh_pack, names=WITHOUT_TOOLS, log=lambda _msg: None)
    elapsed = time.monotonic() - started
    assert set(result.values()) == {"up to date"}
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert elapsed < 5


def test_verify_catches_a_corrupted_and_a_missing_file(pack_copy):
    onnx_file = pack_copy / "PicoDet_layout_1x" / "inference.onnx"
    data = bytearray(onnx_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    onnx_file.write_bytes(bytes(data))
    (pack_copy / "PP-OCRv6_small_rec" / "inference.yml").unlink()

    assert verify_pack(pack_copy) == ["PP-OCRv6_small_rec/inference.yml: missing",
                                      "PicoDet_layout_1x/inference.onnx: checksum mismatch"]
    status = pack_status(pack_copy)
    assert status["PicoDet_layout_1x"] == status["PP-OCRv6_small_rec"] == "corrupt"
    assert status["PP-OCRv6_small_det"] == "ok"

    cli = _models_cli("verify", "--dir", str(pack_copy))
    assert cli.returncode == 1
    assert "PicoDet_layout_1x/inference.onnx: checksum mismatch" in cli.stderr

    # build repairs exactly the damaged folders
    result = build_pack(pack_copy, names=WITHOUT_TOOLS, log=lambda _msg: None)
    assert sorted(k for k, v in result.items() if v == "built") == ["PP-OCRv6_small_rec", "PicoDet_layout_1x"]
    assert verify_pack(pack_copy) == []
    assert _models_cli("verify", "--dir", str(pack_copy)).returncode == 0


def test_rebuild_is_byte_identical_and_a_new_source_version_triggers_it(pack_copy):
    manifest_path = pack_copy / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    det_files = manifest["models"]["PP-OCRv6_small_det"]["files"]
    manifest["models"]["PP-OCRv6_small_det"]["sources"]["rapidocr"] = "0.0.1"  # as if rapidocr was upgraded since
    manifest_path.write_text(json.dumps(manifest))
    assert pack_status(pack_copy)["PP-OCRv6_small_det"] == "outdated"

    result = build_pack(pack_copy, names=["PP-OCRv6_small_det", "PicoDet_layout_1x"], log=lambda _msg: None)
    assert result == {"PP-OCRv6_small_det": "built", "PicoDet_layout_1x": "up to date"}
    rebuilt = json.loads(manifest_path.read_text())["models"]["PP-OCRv6_small_det"]["files"]
    assert rebuilt == det_files


def test_build_without_the_paddle2onnx_venv_says_how_to_get_it(tmp_path):
    context = BuildContext(wheel_cache=tmp_path / "wheels", build_python=tmp_path / "no-venv" / "bin" / "python")
    with pytest.raises(BuildToolMissing, match=r"(?s)paddle2onnx.*\.venv-build.*OCR_BUILD_PYTHON"):
        build_pack(tmp_path / "pack", names=["SLANet_plus_onnx"], context=context, log=lambda _msg: None)
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == [".build.lock"]  # nothing half-built left
    assert not (tmp_path / "wheels").exists()  # and nothing downloaded for nothing


def test_every_folder_carries_its_licence_and_change_notice(fresh_pack, table_pack):
    for pack, names in ((fresh_pack, WITHOUT_TOOLS), (table_pack, ["SLANet_plus_onnx"])):
        for name in names:
            folder = pack / name
            notice = (folder / "NOTICE").read_text(encoding="utf-8")
            licences = sorted(folder.glob("*.LICENSE"))
            if name.startswith("placeholder_"):
                assert licences == [] and "No third-party weights" in notice
                continue
            assert "Apache License" in licences[0].read_text(encoding="utf-8")
            assert "Baidu" in notice and licences[0].name in notice
    assert (fresh_pack / "PP-OCRv6_small_det" / "rapidocr.MODEL_LICENSES.md").is_file()
    assert "MODIFIED" in (fresh_pack / "PicoDet_layout_1x" / "NOTICE").read_text()
    assert "CONVERTED" in (table_pack / "SLANet_plus_onnx" / "NOTICE").read_text()


def test_structure_kwargs_need_a_complete_pack(fresh_pack, table_pack, tmp_path):
    with pytest.raises(ModelsMissing, match="models build"):
        offline_model_kwargs(tmp_path)
    kwargs = offline_model_kwargs(table_pack)
    for key, value in kwargs.items():
        if key.endswith("_model_dir"):
            cfg = yaml.safe_load((Path(value) / "inference.yml").read_text(encoding="utf-8"))
            assert cfg["Global"]["model_name"] == kwargs[key.replace("_dir", "_name")]
    assert {Path(v).name for k, v in kwargs.items() if k.endswith("_model_dir")} >= set(REQUIRED_DIRS)


# --- the models work inside PaddleOCR ---------------------------------------------------------


@pytest.mark.models
def test_text_detector_keeps_the_top_rows_of_a_table_past_1000_cells(fresh_pack):
    """PaddleX keeps 1,000 detected regions by default, counted from the bottom of the page up."""
    from paddleocr import TextDetection

    font = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), 13)
    page = Image.new("RGB", (1190, 1684), "white")  # A4 at 144 DPI
    draw = ImageDraw.Draw(page)
    rows, cols = 60, 20
    for r in range(rows):
        for c in range(cols):
            draw.text((40 + c * 56, 40 + r * 26), f"{(r * 7 + c * 3) % 97:02d}.{c}", font=font, fill="black")
    det = TextDetection(model_name="PP-OCRv6_small_det", model_dir=str(fresh_pack / "PP-OCRv6_small_det"),
                        engine="onnxruntime")
    (result,) = list(det.predict(_bgr(page), limit_side_len=2000, limit_type="max"))
    found_rows = {int((min(p[:, 1]) - 40 + 8) // 26) for p in result["dt_polys"]}
    assert found_rows == set(range(rows))


@pytest.mark.models
def test_layout_model_finds_title_and_table_in_batches(fresh_pack):
    from paddleocr import LayoutDetection

    page, where = _report_page(150)
    blank = Image.new("RGB", page.size, "white")
    lay = LayoutDetection(model_name="PicoDet_layout_1x", model_dir=str(fresh_pack / "PicoDet_layout_1x"),
                          engine="onnxruntime")
    # batch_size 2: PP-StructureV3 runs layout in batches; the source model had a fixed batch of 1.
    results = list(lay.predict([_bgr(page), _bgr(blank)], batch_size=2))

    boxes = [b for b in results[0]["boxes"] if b["score"] >= 0.5]
    tables = [b["coordinate"] for b in boxes if b["label"] == "table"]
    titles = [b["coordinate"] for b in boxes if b["label"] == "paragraph_title"]
    assert len(tables) == 1 and _iou(tables[0], where["table"]) > 0.8
    assert len(titles) == 1 and _iou(titles[0], where["title"]) > 0.6
    assert any(b["label"] == "text" for b in boxes)
    assert [b for b in results[1]["boxes"] if b["score"] >= 0.5] == []


@pytest.mark.models
def test_converted_slanet_reads_a_ruled_table(table_pack):
    from paddleocr import TableStructureRecognition

    page, where = _report_page(150)
    x0, y0, x1, y1 = where["table"]
    crop = page.crop((int(x0) - 10, int(y0) - 10, int(x1) + 10, int(y1) + 10))
    tsr = TableStructureRecognition(model_name="SLANet_plus", model_dir=str(table_pack / "SLANet_plus_onnx"),
                                    engine="onnxruntime")
    result = list(tsr.predict(_bgr(crop)))[0]
    structure = "".join(result["structure"])
    assert structure.count("<tr>") == 4
    assert structure.count("<td></td>") == 12
    assert len(result["bbox"]) == 12


@pytest.mark.models
def test_ppstructurev3_runs_offline_on_the_pack(table_pack):
    from paddleocr import PPStructureV3

    page, _ = _report_page(150)
    pipe = PPStructureV3(engine="onnxruntime", use_textline_orientation=False, **offline_model_kwargs(table_pack))
    res = list(pipe.predict(_bgr(page), **STRUCTURE_PREDICT_KWARGS))[0]
    markdown = res.markdown["markdown_texts"]
    assert "## Quarterly Report on Regional Sales" in markdown
    html = res.json["res"]["table_res_list"][0]["pred_html"]
    for row in TABLE:
        assert "".join(f"<td>{cell}</td>" for cell in row) in html
