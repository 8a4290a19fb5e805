"""The PDF/A-2b checks a PDF/A export must pass, written out with pikepdf (veraPDF is not installable here).

``assert_pdfa_2b`` runs pikepdf's validator (an allowlist over the veraPDF rule
catalogue: it approves only what it recognises and knows to conform) and then
checks again, one by one, the parts a reader of docs/operations.md is told are
checked, so that each of them fails here by name.
"""

from __future__ import annotations

import io
from datetime import datetime

import pikepdf
import pikepdf.pdfa
from pikepdf.models.metadata import decode_pdf_date

FONT_FILES = ("/FontFile", "/FontFile2", "/FontFile3")


def assert_pdfa_2b(data: bytes) -> None:
    report = pikepdf.pdfa.validate_written(io.BytesIO(data), "2b")
    assert report.passed, report.summary()
    with pikepdf.open(io.BytesIO(data)) as pdf:
        assert "/Encrypt" not in pdf.trailer
        _assert_srgb_output_intent(pdf)
        _assert_xmp_matches_info(pdf)
        for page in pdf.pages:
            assert "/Group" not in page  # a page group is how transparency starts
            _assert_resources(page.obj.get("/Resources", pikepdf.Dictionary()), seen=set())


def _assert_srgb_output_intent(pdf: pikepdf.Pdf) -> None:
    (intent,) = pdf.Root.OutputIntents
    assert intent.S == "/GTS_PDFA1"
    profile = intent.DestOutputProfile
    assert profile.N == 3
    icc = profile.read_bytes()
    assert icc[16:20] == b"RGB " and icc[12:16] == b"mntr"  # colour space and device class of the header
    assert b"sRGB" in icc


def _assert_xmp_matches_info(pdf: pikepdf.Pdf) -> None:
    meta = pdf.open_metadata()
    info = pdf.docinfo
    assert meta["pdfaid:part"] == "2" and meta["pdfaid:conformance"] == "B"
    assert meta["dc:title"] == str(info.Title) and meta["dc:title"]
    assert meta["pdf:Producer"] == str(info.Producer)
    assert datetime.fromisoformat(meta["xmp:CreateDate"]) == decode_pdf_date(str(info.CreationDate))


def _assert_resources(resources: pikepdf.Dictionary, seen: set) -> None:
    """Every font embedded and nothing transparent, in these resources and every form XObject's below."""
    for font in resources.get("/Font", pikepdf.Dictionary()).values():
        fonts = font.DescendantFonts if font.get("/Subtype") == "/Type0" else [font]
        for each in fonts:
            if each.get("/Subtype") == "/Type3":
                continue  # glyphs drawn by content streams: nothing to embed
            descriptor = each.get("/FontDescriptor")
            assert descriptor is not None and any(k in descriptor for k in FONT_FILES), each.get("/BaseFont")
    for state in resources.get("/ExtGState", pikepdf.Dictionary()).values():
        assert state.get("/SMask", pikepdf.Name.None_) == pikepdf.Name.None_
        assert float(state.get("/CA", 1)) == 1 and float(state.get("/ca", 1)) == 1
    for xobject in resources.get("/XObject", pikepdf.Dictionary()).values():
        if xobject.objgen in seen:
            continue
        seen.add(xobject.objgen)
        assert "/SMask" not in xobject
        if xobject.get("/Subtype") == "/Form":
            group = xobject.get("/Group")
            assert group is None or group.get("/S") != "/Transparency"
            _assert_resources(xobject.get("/Resources", pikepdf.Dictionary()), seen)
