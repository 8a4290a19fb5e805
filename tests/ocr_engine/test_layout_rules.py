"""Reading-order and table rules on line boxes alone (no models): the cases real pages broke."""

from __future__ import annotations

from ocr_engine.reading_order import line_order, xy_cut_order
from ocr_engine.table_rows import find_table_rows, reading_order

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
