"""hOCR 1.2: XHTML with ``ocr_page`` > ``ocr_carea`` > ``ocr_par`` > ``ocr_line`` > ``ocrx_word``.

One ``ocr_carea`` per region in reading order (figures without text are
``ocr_photo``), one ``ocr_par`` inside it, one ``ocr_line`` per line. Lines the
engine gave word boxes for get one ``ocrx_word`` per word; other lines, and lines
a reviewer corrected, get one word spanning the line. Built with ElementTree so
every text and attribute is escaped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import PurePath

from ..schema import BBox, DocumentResult, Line, Page
from .blocks import line_words, page_blocks

XHTML = "http://www.w3.org/1999/xhtml"
_DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">'
)
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocr_photo ocrp_wconf"


def render(result: DocumentResult) -> bytes:
    html = ET.Element("html", {"xmlns": XHTML})
    head = ET.SubElement(html, "head")
    ET.SubElement(head, "title").text = result.source.get("filename") or "OCR result"
    ET.SubElement(head, "meta", {"http-equiv": "Content-Type", "content": "text/html; charset=utf-8"})
    engine = result.engine
    system = f"ocr_engine {engine.version} (PaddleOCR {engine.pipeline} pipeline)"
    for name, content in (
        ("ocr-system", system),
        ("ocr-capabilities", CAPABILITIES),
        ("ocr-number-of-pages", str(len(result.pages))),
    ):
        ET.SubElement(head, "meta", {"name": name, "content": content})
    body = ET.SubElement(html, "body")
    image = _image_name(result.source.get("filename"))
    for page in result.pages:
        body.append(_page(page, image))
    ET.indent(html)
    xml = ET.tostring(html, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{_DOCTYPE}\n{xml}\n'.encode("utf-8")


def _page(page: Page, image: str | None) -> ET.Element:
    props = [f'image "{image}"'] if image else []
    props += [f"bbox 0 0 {page.width} {page.height}", f"ppageno {page.page_number - 1}"]
    if page.dpi:
        props.append(f"scan_res {round(page.dpi)} {round(page.dpi)}")
    div = ET.Element("div", {"class": "ocr_page", "id": f"page_{page.page_number}", "title": "; ".join(props)})
    for block in page_blocks(page):
        region = block.region
        if region.type == "figure" and not block.lines:
            ET.SubElement(div, "div", {"class": "ocr_photo", "id": region.id, "title": _bbox(region.bbox)})
            continue
        area = ET.SubElement(div, "div", {"class": "ocr_carea", "id": region.id, "title": _bbox(region.bbox)})
        if block.lines:
            par = ET.SubElement(area, "p", {"class": "ocr_par", "id": f"{region.id}-par", "title": _bbox(region.bbox)})
            for line in block.lines:
                par.append(_line(line))
    return div


def _line(line: Line) -> ET.Element:
    span = ET.Element("span", {"class": "ocr_line", "id": line.id, "title": _title(line.bbox, line.confidence)})
    words = line_words(line)
    boxes = [(w.text, w.bbox, w.confidence) for w in words] if words else [(line.text, line.bbox, line.confidence)]
    for index, (text, bbox, confidence) in enumerate(boxes, start=1):
        word = ET.SubElement(
            span, "span", {"class": "ocrx_word", "id": f"{line.id}-w{index}", "title": _title(bbox, confidence)}
        )
        word.text = text
        word.tail = " "  # readers that strip markup still see words apart
    return span


def _title(bbox: BBox, confidence: float | None) -> str:
    return _bbox(bbox) + ("" if confidence is None else f"; x_wconf {round(confidence * 100)}")


def _bbox(bbox: BBox) -> str:
    return "bbox " + " ".join(str(round(v)) for v in bbox)


def _image_name(filename: str | None) -> str | None:
    """The source file's name, made safe inside hOCR's quoted, ';'-separated title."""
    if not filename:
        return None
    return PurePath(filename).name.replace('"', "_").replace(";", "_")
