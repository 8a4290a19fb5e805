"""Sample documents as fixtures. Byte strings are immutable and shared per session;
images are made per test, since a test may draw on or convert them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ocr_engine import bad_files, samples


@pytest.fixture
def report_page() -> samples.SamplePage:
    return samples.report_page()


@pytest.fixture
def two_column_page() -> samples.SamplePage:
    return samples.two_column_page()


@pytest.fixture(scope="session")
def report_pdf() -> samples.SampleDocument:
    return samples.report_pdf(pages=3)


@pytest.fixture(scope="session")
def multipage_tiff() -> samples.SampleDocument:
    return samples.multipage_tiff()


@pytest.fixture(scope="session")
def exif_rotated_jpeg() -> samples.SampleDocument:
    return samples.exif_rotated_jpeg()


@pytest.fixture(scope="session")
def encrypted_pdf() -> bytes:
    return bad_files.encrypted_pdf(password="s3cret")


@pytest.fixture(scope="session")
def zero_page_pdf() -> bytes:
    return bad_files.zero_page_pdf()


@pytest.fixture(scope="session")
def bomb_png() -> bytes:
    return bad_files.bomb_png()


@pytest.fixture
def write_file(tmp_path):
    """``write_file(data, name)`` -> the path of a new file holding ``data``."""

    def write(data: bytes, name: str) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return write


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The offline model pack that `make test` builds (OCR_MODELS_DIR, else <repo>/models)."""
    return Path(os.environ.get("OCR_MODELS_DIR", Path(__file__).resolve().parents[2] / "models"))


@pytest.fixture(scope="session")
def structure_engine(models_dir):
    """Loaded once per session: every model test shares it (loading costs seconds)."""
    from ocr_engine.config import EngineConfig
    from ocr_engine.engine import Engine

    return Engine(EngineConfig(pipeline="structure", models_dir=models_dir))


@pytest.fixture(scope="session")
def ocr_engine(models_dir):
    from ocr_engine.config import EngineConfig
    from ocr_engine.engine import Engine

    return Engine(EngineConfig(pipeline="ocr", models_dir=models_dir))


@pytest.fixture(params=["ocr", "structure"])
def engine(request):
    return request.getfixturevalue(f"{request.param}_engine")
