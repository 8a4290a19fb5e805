"""``python -m ocr_engine``: a real process, real models, output and exit codes as a user sees them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pypdf
import pytest

from tests.ocr_engine import samples
from tests.ocr_engine.pdfa_checks import assert_pdfa_2b

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, models_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ocr_engine", *args, "--models-dir", str(models_dir)],
                          cwd=REPO, capture_output=True, timeout=300)


def test_unsupported_file_exits_2_with_code_and_message(tmp_path, models_dir):
    gif = tmp_path / "anim.gif"
    gif.write_bytes(b"GIF89a" + b"\x00" * 64)
    proc = run_cli(str(gif), models_dir=models_dir)
    assert proc.returncode == 2
    assert b"unsupported_file_type" in proc.stderr and b"GIF" in proc.stderr
    assert proc.stdout == b""


def test_bad_page_range_exits_2(tmp_path, models_dir):
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(samples.report_pdf(pages=2).data)
    proc = run_cli(str(pdf), "--pages", "3-1", models_dir=models_dir)
    assert proc.returncode == 2
    assert b"invalid_page_range" in proc.stderr


@pytest.mark.models
def test_pdf_to_text_and_markdown_with_progress_bar(tmp_path, models_dir):
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(samples.report_pdf(pages=2).data)
    proc = run_cli(str(pdf), "--pipeline", "ocr", "--pages", "1", "--format", "text", models_dir=models_dir)
    assert proc.returncode == 0, proc.stderr.decode()
    assert samples.REPORT_TITLE in proc.stdout.decode()
    assert b"1/1" in proc.stderr  # the per-page progress bar

    out = tmp_path / "report.md"
    proc = run_cli(str(pdf), "--pipeline", "structure", "--format", "md", "-o", str(out), models_dir=models_dir)
    assert proc.returncode == 0, proc.stderr.decode()
    markdown = out.read_text()
    assert f"## {samples.REPORT_TITLE}" in markdown and "<!-- page 2 -->" in markdown
    assert "| North | 1,250 | 15% |" in markdown


@pytest.mark.models
def test_pdfa_format_writes_a_pdfa_file_that_keeps_a_born_digital_page(tmp_path, models_dir):
    source = Path(__file__).parent / "data" / "born_digital" / "bash-groff-ghostscript.pdf"
    out = tmp_path / "bash.pdf"
    proc = run_cli(str(source), "--pipeline", "ocr", "--format", "pdfa", "-o", str(out), models_dir=models_dir)
    assert proc.returncode == 0, proc.stderr.decode()
    assert_pdfa_2b(out.read_bytes())
    assert pypdf.PdfReader(out).pages[0].extract_text() == pypdf.PdfReader(source).pages[0].extract_text()
