"""PAGE XML (PRImA pagecontent 2019-07-15), the ground-truth format of eScriptorium, Transkribus and OCR-D.

PAGE holds one page per file: a one-page result is one XML document, a longer
one a ZIP of ``page-0001.xml``, ... . Regions keep their reading order
(``ReadingOrder``), their type (text types map onto PAGE's ``@type``), their
polygon, and their lines with polygon, text and confidence; lines a reviewer
corrected carry the corrected text (the engine's is in ``@comments``).
Tables are a ``TableRegion`` holding one ``TextRegion`` with the lines;
figures without lines are an ``ImageRegion``. Built with ElementTree.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from datetime import datetime, timezone
from pathlib import PurePath

from ..schema import DocumentResult, Line, Page, Polygon, Region

PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{PAGE_NS} {PAGE_NS}/pagecontent.xsd"
# Our region types -> PAGE TextRegion @type (closed list in the XSD's TextTypeSimpleType).
TEXT_TYPES = {
    "title": "heading", "text": "paragraph", "list": "paragraph", "caption": "caption", "header": "header",
    "footer": "footer", "page_number": "page-number", "footnote": "footnote", "reference": "endnote",
}


def render(result: DocumentResult) -> bytes:
    """One PAGE XML document for a one-page result, else a ZIP of one per page."""
    if len(result.pages) == 1:
        return render_page(result, result.pages[0])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for page in result.pages:
            archive.writestr(f"page-{page.page_number:04d}.xml", render_page(result, page))
    return buffer.getvalue()


def render_page(result: DocumentResult, page: Page) -> bytes:
    root = ET.Element("PcGts", {"xmlns": PAGE_NS, f"{{{XSI_NS}}}schemaLocation": SCHEMA_LOCATION,
                                "pcGtsId": f"page-{page.page_number}"})
    metadata = ET.SubElement(root, "Metadata")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    ET.SubElement(metadata, "Creator").text = f"ocr_engine {result.engine.version} ({result.engine.pipeline})"
    ET.SubElement(metadata, "Created").text = now
    ET.SubElement(metadata, "LastChange").text = now
    filename = PurePath(result.source.get("filename") or "page").name
    page_el = ET.SubElement(root, "Page", imageFilename=f"{filename}#page={page.page_number}",
                            imageWidth=str(page.width), imageHeight=str(page.height))
    regions = sorted(page.regions, key=lambda region: region.order)
    lines_by_region: dict[str, list[Line]] = {}
    for line in sorted(page.lines, key=lambda line: line.order):
        lines_by_region.setdefault(line.region_id, []).append(line)
    if regions:
        group = ET.SubElement(ET.SubElement(page_el, "ReadingOrder"), "OrderedGroup", id=f"p{page.page_number}-ro")
        for index, region in enumerate(regions):
            ET.SubElement(group, "RegionRefIndexed", index=str(index), regionRef=region.id)
    for region in regions:
        _region(page_el, region, lines_by_region.get(region.id, []))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _points(polygon: Polygon) -> str:
    return " ".join(f"{max(0, round(x))},{max(0, round(y))}" for x, y in polygon)


def _region(parent: ET.Element, region: Region, lines: list[Line]) -> None:
    if region.type == "figure" and not lines:
        ET.SubElement(ET.SubElement(parent, "ImageRegion", id=region.id), "Coords", points=_points(region.polygon))
        return
    if region.type == "table":
        table = ET.SubElement(parent, "TableRegion", id=region.id)
        ET.SubElement(table, "Coords", points=_points(region.polygon))
        if lines:
            _text_region(table, f"{region.id}-text", "paragraph", region.polygon, lines)
        return
    _text_region(parent, region.id, TEXT_TYPES.get(region.type, "other"), region.polygon, lines)


def _text_region(parent: ET.Element, region_id: str, kind: str, polygon: Polygon, lines: list[Line]) -> None:
    element = ET.SubElement(parent, "TextRegion", id=region_id, type=kind)
    ET.SubElement(element, "Coords", points=_points(polygon))
    for line in lines:
        attributes = {"id": line.id}
        if line.original_text is not None and line.original_text != line.text:
            attributes["comments"] = f"engine read: {line.original_text}"
        line_el = ET.SubElement(element, "TextLine", attributes)
        ET.SubElement(line_el, "Coords", points=_points(line.polygon))
        _text_equiv(line_el, line.text, line.confidence)
    _text_equiv(element, "\n".join(line.text for line in lines), None)


def _text_equiv(parent: ET.Element, text: str, confidence: float | None) -> None:
    attributes = {} if confidence is None else {"conf": f"{min(max(confidence, 0.0), 1.0):.4f}"}
    ET.SubElement(ET.SubElement(parent, "TextEquiv", attributes), "Unicode").text = text
