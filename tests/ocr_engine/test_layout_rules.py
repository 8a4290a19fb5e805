"""Reading-order and table rules on line boxes alone (no models): the cases real pages broke."""

from __future__ import annotations

from ocr_engine.block_types import fix_types
from ocr_engine.geometry import polygon_from_box
from ocr_engine.layout_evidence import standing_boxes
from ocr_engine.listings import numbered_listings
from ocr_engine.normalize import geometry_blocks
from ocr_engine.page_parts import Block, RawLine
from ocr_engine.paragraphs import group_paragraphs
from ocr_engine.reading_order import line_order, xy_cut_order
from ocr_engine.table_rows import find_table_rows, is_grid, reading_order

H = 20  # line height in pixels


def line(x0: float, row: float, x1: float) -> list[float]:
    """A line box at text row ``row`` (rows 30 px apart)."""
    return [x0, 100 + row * 30, x1, 100 + row * 30 + H]


def test_margin_label_is_read_with_its_row_not_as_a_column():
    blocks = [line(100, 0, 700), [100, 130, 900, 200], line(100, 4, 700), line(950, 4, 1040), [100, 250, 900, 320]]
    order = xy_cut_order(blocks, min_col_gap=10)
    assert order.index(3) == order.index(2) + 1  # "[Function]" right after its signature line
    assert order == sorted(order, key=lambda i: (blocks[i][1], blocks[i][0]))


def test_two_real_columns_are_still_read_column_by_column():
    left = [line(100, r, 500) for r in range(6)]
    right = [line(560, r, 960) for r in range(6)]
    order = xy_cut_order(left + right, min_col_gap=10)
    assert order == list(range(12))


def test_ruled_table_with_centred_labels_reads_row_by_row():
    # Line boxes of a real page (Debian Reference ES p. 54, 144 DPI): labels centred beside wrapped cells.
    cells = [
        ("vista", [131, 160, 190, 183]), ("descripción de la vista", [634, 160, 850, 183]),
        ("Vista del paquete", [132, 184, 330, 204]), ("consulte Tabla 2.10 (por defecto)", [635, 184, 950, 204]),
        ("relación de paquete los cuales se recomiendan por algún", [633, 210, 1120, 229]),
        ("Recomendaciones de auditoria", [135, 231, 420, 254]),
        ("paquete marcado para instalación pero sin instalar por el", [632, 231, 1125, 254]),
        ("momento", [633, 258, 720, 276]),
        ("relación de paquetes sin clasificar (para usar con", [633, 281, 1080, 301]),
        ("Relación plana de paquetes", [134, 291, 400, 313]),
        ("expresiones regulares)", [634, 305, 830, 325]),
    ]
    texts, boxes = [c[0] for c in cells], [c[1] for c in cells]
    rows = [[0, 1], [2, 3], [5, 4, 6, 7], [9, 8, 10]]  # label first, then its cell top to bottom
    tables = find_table_rows(boxes, texts)
    assert len(tables) == 1
    assert [[i for cell in row for i in cell] for row in tables[0]] == rows
    assert reading_order(boxes, texts) == [i for row in rows for i in row]


def test_paragraph_ends_beside_a_prose_column_are_not_a_table():
    texts = ["the model layout page document reading order", "column text recognition table region line detector",
             "characters.", "scan language results method evaluation accuracy",
             "2 Related Work", "error rate benchmark dataset training images"]
    boxes = [line(150, 0, 566), line(622, 0, 1036), line(150, 1, 250), line(622, 1, 1036),
             line(150, 2, 320), line(622, 2, 1036)]
    assert find_table_rows(boxes, texts) == []


def test_lines_of_different_heights_keep_their_order_inside_a_block():
    tall = [100, 100, 500, 140]  # a code line whose box also holds a tall bracket
    below = [50, 128, 400, 146]  # the next, less indented line, its box overlapping the one above
    same_row = [520, 104, 700, 138]
    assert line_order([below, tall, same_row]) == [1, 2, 0]


PROSE = "the model layout page document reading order text"


def test_table_in_one_column_never_takes_in_the_other_column():
    # A two-column article (acmart sample, p. 3): the right column opens with a three-column
    # table whose rows share their height with prose lines of the left column.
    left = [line(100, r, 560) for r in range(16)]
    cells = [line(x0, r, x1) for r in range(1, 5) for x0, x1 in ((620, 760), (800, 880), (920, 1060))]
    right_prose = [line(620, r, 1080) for r in range(6, 16)]
    boxes = left + cells + right_prose
    texts = [PROSE] * 16 + ["Ø", "1 in 5", "For Swedish names"] * 4 + [PROSE] * 10
    tables = find_table_rows(boxes, texts)
    assert len(tables) == 1
    assert [[i for cell in row for i in cell] for row in tables[0]] == [[16 + 3 * r, 17 + 3 * r, 18 + 3 * r]
                                                                         for r in range(4)]


def test_full_width_table_across_the_column_gap_stays_one_table():
    # Two prose columns above and below; the table's middle column gap lies on the page's gutter.
    above = [line(x0, r, x1) for r in range(3) for x0, x1 in ((100, 560), (620, 1080))]
    table = [line(x0, r, x1) for r in range(4, 7) for x0, x1 in ((100, 250), (400, 480), (620, 760), (900, 980))]
    below = [line(x0, r, x1) for r in range(8, 11) for x0, x1 in ((100, 560), (620, 1080))]
    boxes = above + table + below
    texts = [PROSE] * 6 + ["Line order", "120", "2.1 %", "0.8 s"] * 3 + [PROSE] * 6
    tables = find_table_rows(boxes, texts)
    assert len(tables) == 1
    assert [[i for cell in row for i in cell] for row in tables[0]] == [[6 + 4 * r + c for c in range(4)]
                                                                         for r in range(3)]


def raw_line(box: list[float], text: str) -> RawLine:
    return RawLine(polygon_from_box(box), box, text, 0.99)


# A Why3 manual page (p. 32): the layout model boxed a paragraph and the OCaml listing under it as
# one table; two listing lines carry a comment the detector boxed apart.
PARAGRAPH_AND_LISTING = [
    (line(100, 0, 1000), PROSE), (line(100, 1, 1000), PROSE), (line(100, 2, 1000), PROSE), (line(100, 3, 600), PROSE),
    (line(110, 5, 500), "let task1 : Task.task = None"), (line(600, 5, 900), "(* empty task *)"),
    (line(110, 6, 700), "let goal_id1 = Decl.create_prsymbol"),
    (line(110, 7, 500), "let task2 = None"), (line(600, 7, 900), "(* another *)"),
    (line(110, 8, 700), "let task1 = Task.add_prop_decl task1"),
]
# An Auto Multiple Choice manual page (p. 19): LaTeX code with a gutter of line numbers; blank lines
# keep their number alone, and a callout sits at the right end of a line.
NUMBERED_LISTING = [
    (line(100, 0, 120), "85"), (line(100, 1, 120), "86"), (line(140, 1, 600), "%%% beginning of the header"),
    (line(100, 2, 120), "87"), (line(100, 3, 120), "88"), (line(140, 3, 500), r"{\large\bf Answer sheet:}"),
    (line(100, 4, 120), "89"), (line(140, 4, 500), r"\hfill \namefield{\fbox{"), (line(560, 4, 620), "[6]"),
    (line(100, 5, 120), "90"), (line(160, 5, 600), r"\begin{minipage}{.5\linewidth}"),
]
# A two-column attribute table: labels beside values that wrap over two lines.
ATTRIBUTE_TABLE = [
    (line(100, 0, 260), "Name"), (line(400, 0, 1000), "the package's name, as apt and dpkg"),
    (line(400, 1, 700), "know it"), (line(100, 2, 260), "Version"), (line(400, 2, 1000), "the upstream version"),
    (line(100, 3, 260), "Section"), (line(400, 3, 1000), "the archive area and the section of"),
    (line(400, 4, 800), "the package"),
]


def test_a_paragraph_boxed_with_a_listing_is_no_grid_and_keeps_its_order():
    boxes, texts = [b for b, _ in PARAGRAPH_AND_LISTING], [t for _, t in PARAGRAPH_AND_LISTING]
    assert not is_grid(boxes, texts)
    assert reading_order(boxes, texts) is None
    table_box = Block("table", "table", [90, 90, 1010, 380], 0.9, "layout", [])
    lines = [raw_line(b, t) for b, t in PARAGRAPH_AND_LISTING]
    assert standing_boxes([table_box], lines) == []  # it only types the blocks the geometry finds


def test_a_numbered_listing_is_one_block_each_line_with_its_number():
    boxes, texts = [b for b, _ in NUMBERED_LISTING], [t for _, t in NUMBERED_LISTING]
    assert not is_grid(boxes, texts)
    assert find_table_rows(boxes, texts) == []
    assert numbered_listings(boxes, texts) == [list(range(len(boxes)))]
    blocks, tables = geometry_blocks([raw_line(b, t) for b, t in NUMBERED_LISTING])
    assert tables == [] and len(blocks) == 1
    assert [texts[i] for i in line_order(boxes)][4:8] == ["88", r"{\large\bf Answer sheet:}", "89",
                                                          r"\hfill \namefield{\fbox{"]


def test_a_real_table_is_a_grid_read_row_by_row():
    boxes, texts = [b for b, _ in ATTRIBUTE_TABLE], [t for _, t in ATTRIBUTE_TABLE]
    assert is_grid(boxes, texts)
    assert reading_order(boxes, texts) == list(range(len(boxes)))
    table_box = Block("table", "table", [90, 90, 1010, 260], 0.9, "layout", [])
    assert standing_boxes([table_box], [raw_line(b, t) for b, t in ATTRIBUTE_TABLE]) == [table_box]
    assert table_box.members == list(range(len(boxes)))


def test_a_figure_box_over_text_holds_no_lines():
    figure = Block("figure", "image", [90, 90, 1010, 380], 0.9, "layout", [])
    photo = Block("figure", "image", [90, 1000, 1010, 1400], 0.9, "layout", [])
    assert standing_boxes([figure, photo], [raw_line(b, t) for b, t in ATTRIBUTE_TABLE]) == [photo]
    assert figure.members == []


def test_a_wrapped_numbered_heading_is_one_block():
    heading = [raw_line(line(100, 0, 560), "3.2 Flexible typography of the"), raw_line(line(150, 1, 330), "bibliography")]
    body = [raw_line(line(100, r, 560), PROSE) for r in (2, 3, 4)]  # set close under it
    blocks, _ = geometry_blocks(heading + body)
    assert sorted(b.members for b in blocks) == [[0, 1], [2, 3, 4]]


def test_a_word_boxed_apart_joins_its_line():
    # "as" has no ascender: its box is shorter and lower than its line's, and the justified space is wide.
    lines = [raw_line(line(100, 0, 500), PROSE), raw_line([514, 106, 536, 120], "as"),
             raw_line(line(100, 1, 536), PROSE)]
    assert group_paragraphs(lines) == [[0, 1, 2]]


def test_a_line_over_a_listing_is_read_before_it():
    # "(continued from previous page)" at the right, over a framed listing whose lines end further left.
    blocks = [[880, 100, 1080, 117], [140, 126, 860, 190], [140, 200, 1080, 260], [140, 270, 800, 330]]
    assert xy_cut_order(blocks, min_col_gap=10) == [0, 1, 2, 3]


def test_running_footer_beside_its_page_number_is_read_last():
    lines = [raw_line(line(100, r, 1000), PROSE) for r in range(3)] + [
        raw_line([100, 1480, 420, 1500], "4.3. Calling External Provers"), raw_line([1050, 1478, 1084, 1504], "33")]
    blocks = [Block("text", "text", ln.bbox, None, "ocr", [i]) for i, ln in enumerate(lines)]
    fix_types(blocks, lines, page_height=1584)
    assert [b.type for b in blocks][3:] == ["footer", "page_number"]


def test_a_table_with_numbered_rows_is_a_table_not_a_listing():
    # R's data frame (An Introduction to R, p. 33): row labels 01, 02, ... before six columns of cells.
    header = [(line(x0, 0, x0 + 60), name) for x0, name in ((350, "Price"), (450, "Floor"), (570, "Area"))]
    rows = [(line(x0, r, x0 + 50), text) for r in range(1, 6)
            for x0, text in ((300, f"0{r}"), (350, "52.00"), (450, "111.0"), (570, "830"))]
    boxes, texts = [b for b, _ in header + rows], [t for _, t in header + rows]
    assert numbered_listings(boxes, texts) == []
    assert is_grid(boxes, texts)
    assert len(find_table_rows(boxes, texts)) == 1


def test_labels_at_the_top_of_long_wrapped_values_read_row_by_row():
    # A born-digital attribute table (text layer): each label at the top of its row, values wrapping
    # over three lines; the third line is nearer the next label than its own.
    cells = [(line(100, 0, 200), "Name"), (line(400, 0, 1000), "the package's name, as apt and dpkg"),
             (line(400, 1, 1000), "know it, which is also the name of"), (line(400, 2, 700), "its source"),
             (line(100, 3, 260), "Version"), (line(400, 3, 1000), "the upstream version"),
             (line(100, 4, 240), "Section"), (line(400, 4, 1000), "the archive area and the section of"),
             (line(400, 5, 1000), "the package, as the archive files it"), (line(400, 6, 800), "under pool/")]
    boxes, texts = [b for b, _ in cells], [t for _, t in cells]
    assert reading_order(boxes, texts) == list(range(len(cells)))
    (table,) = find_table_rows(boxes, texts)
    assert table == [[[0], [1, 2, 3]], [[4], [5]], [[6], [7, 8, 9]]]
