"""``pip install ./client`` in a fresh venv, without the server's dependencies, gives a working ``ocr-client``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # pip downloads the client's three dependencies (and setuptools to build it)

CLIENT = Path(__file__).resolve().parents[2] / "client"


def test_the_client_installs_alone_and_runs(tmp_path):
    # A copy: building in the checkout would leave build/ and *.egg-info in it.
    source = shutil.copytree(CLIENT, tmp_path / "client",
                             ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr

    helped = subprocess.run([str(venv / "bin" / "ocr-client"), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "submit" in helped.stdout and "OCR_URL" in helped.stdout, helped
    alone = subprocess.run([str(python), "-c", "import sys, ocr_client, ocr_client.cli; print(sorted(m for m in "
                            "sys.modules if m.split('.')[0] in ('django', 'jobs', 'ocr_engine', 'paddleocr')))"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert alone.returncode == 0 and alone.stdout.strip() == "[]", alone
    for server_side in ("django", "paddleocr", "ocr_engine"):  # run outside the checkout, which holds ocr_engine/
        missing = subprocess.run([str(python), "-c", f"import {server_side}"], capture_output=True, timeout=60,
                                 cwd=tmp_path)
        assert missing.returncode != 0, f"{server_side} is in the client's venv"
    no_extra = subprocess.run([str(venv / "bin" / "ocr-client"), "--url", "http://127.0.0.1:9", "--token", "t",
                               "mcp"], capture_output=True, text=True, timeout=60)
    assert no_extra.returncode == 2 and "pip install 'ocr-client[mcp]'" in no_extra.stderr, no_extra
