"""ALTO v4 XML (pixel units), one ``Page`` per result page.

Regions become blocks in reading order, tagged with their region type through a
``LayoutTag``: text regions are ``TextBlock``; tables are a ``ComposedBlock``
(TYPE "table") holding one ``TextBlock`` per cell that has lines, plus one for
lines outside every cell; figures without text are ``Illustration``. Empty
regions stay as empty blocks rather than vanish. Lines carry their polygon as a
``Shape``; lines a reviewer corrected are marked ``CS="true"``. Words with boxes
become ``String`` elements with ``SP`` between them; other lines, and corrected
ones, are a single ``String``. Built with ElementTree, so all text is escaped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import PurePath

from ..schema import BBox, DocumentResult, Line, Page, Polygon
from .blocks import Block, assign_to_cells, line_words, page_blocks

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{ALTO_NS} http://www.loc.gov/standards/alto/v4/alto-4-4.xsd"


def render(result: DocumentResult) -> bytes:
    # Tags stay unprefixed and the root declares ALTO as the default namespace:
    # ElementTree's default_namespace option rejects unprefixed attributes.
    alto = _el(None, "alto", xmlns=ALTO_NS, SCHEMAVERSION="4.4")
    alto.set(f"{{{XSI_NS}}}schemaLocation", SCHEMA_LOCATION)
    _description(alto, result)
    types = sorted({region.type for page in result.pages for region in page.regions})
    if types:
        tags = _el(alto, "Tags")
        for kind in types:
            _el(tags, "LayoutTag", ID=_tag_id(kind), LABEL=kind)
    layout = _el(alto, "Layout")
    for page in result.pages:
        _page(layout, page)
    ET.indent(alto)
    return ET.tostring(alto, encoding="utf-8", xml_declaration=True) + b"\n"


def _description(alto: ET.Element, result: DocumentResult) -> None:
    description = _el(alto, "Description")
    _el(description, "MeasurementUnit").text = "pixel"
    if result.source.get("filename"):
        info = _el(description, "sourceImageInformation")
        _el(info, "fileName").text = PurePath(result.source["filename"]).name
    engine = result.engine
    processing = _el(description, "Processing", ID="ocr")
    _el(processing, "processingCategory").text = "contentGeneration"
    models = ", ".join(f"{role}={name}" for role, name in sorted(engine.models.items()))
    _el(processing, "processingStepSettings").text = (
        f"pipeline={engine.pipeline}; lang={engine.lang}; backend={engine.backend}; device={engine.device}; "
        f"models: {models}"
    )
    software = _el(processing, "processingSoftware")
    _el(software, "softwareName").text = "ocr_engine"
    _el(software, "softwareVersion").text = engine.version
    _el(software, "applicationDescription").text = f"PaddleOCR {engine.pipeline} pipeline"


def _page(layout: ET.Element, page: Page) -> None:
    element = _el(
        layout, "Page", ID=f"page{page.page_number}", PHYSICAL_IMG_NR=page.page_number,
        WIDTH=page.width, HEIGHT=page.height, PROCESSINGREFS="ocr",
    )
    space = _el(element, "PrintSpace", HPOS=0, VPOS=0, WIDTH=page.width, HEIGHT=page.height)
    for block in page_blocks(page):
        _block(space, block)


def _block(parent: ET.Element, block: Block) -> None:
    region = block.region
    common = {"ID": region.id, **_box(region.bbox), "TAGREFS": _tag_id(region.type)}
    if region.type == "figure" and not block.lines:
        _shape(_el(parent, "Illustration", **common), region.polygon)
    elif block.table is not None:
        composed = _el(parent, "ComposedBlock", **common, TYPE="table")
        _shape(composed, region.polygon)
        per_cell, leftover = assign_to_cells(block.table, block.lines)
        for cell, lines in zip(block.table.cells, per_cell):
            if lines:
                cell_id = f"{region.id}-c{cell.row}-{cell.col}"
                _text_block(composed, lines, ID=cell_id, **_box(cell.bbox or region.bbox))
        if leftover:
            _text_block(composed, leftover, ID=f"{region.id}-rest", **_box(region.bbox))
    else:
        _shape(_text_block(parent, block.lines, **common), region.polygon)


def _text_block(parent: ET.Element, lines: list[Line], **attrs) -> ET.Element:
    block = _el(parent, "TextBlock", **attrs)
    for line in lines:
        _text_line(block, line)
    return block


def _text_line(block: ET.Element, line: Line) -> None:
    corrected = line.original_text is not None
    element = _el(block, "TextLine", ID=line.id, **_box(line.bbox), **({"CS": "true"} if corrected else {}))
    _shape(element, line.polygon)
    words = line_words(line)
    strings = (
        [(w.text, w.bbox, w.confidence) for w in words] if words else [(line.text, line.bbox, line.confidence)]
    )
    for index, (text, bbox, confidence) in enumerate(strings, start=1):
        if index > 1:
            _el(element, "SP")
        attrs = {"ID": f"{line.id}-w{index}", "CONTENT": text, **_box(bbox)}
        if confidence is not None:
            attrs["WC"] = f"{min(max(confidence, 0.0), 1.0):.4f}"
        if corrected:
            attrs["CS"] = "true"
        _el(element, "String", **attrs)


def _shape(element: ET.Element, polygon: Polygon) -> ET.Element:
    """Insert the polygon as the element's first child (ALTO's order: Shape, then content)."""
    if len(polygon) >= 3:
        shape = ET.Element("Shape")
        ET.SubElement(shape, "Polygon", POINTS=" ".join(f"{round(x)},{round(y)}" for x, y in polygon))
        element.insert(0, shape)
    return element


def _box(bbox: BBox) -> dict[str, int]:
    x0, y0, x1, y1 = (round(v) for v in bbox)
    return {"HPOS": x0, "VPOS": y0, "WIDTH": x1 - x0, "HEIGHT": y1 - y0}


def _tag_id(region_type: str) -> str:
    return f"type-{region_type}"


def _el(parent: ET.Element | None, tag: str, **attrs) -> ET.Element:
    values = {key: str(value) for key, value in attrs.items()}
    return ET.Element(tag, values) if parent is None else ET.SubElement(parent, tag, values)
