"""The geometry thresholds of normalization (``ocr_engine.normalize``), each named by what it measures.

Most are in line heights, so they hold at any resolution; the rest are shares
of a page or of a box. Changing one changes reading order and grouping: rerun
``bench/compare.py --cache`` on the real-page corpus.
"""

# A line belongs to the layout box holding this share of it or more (layout_evidence).
MIN_LINE_SHARE = 0.5

# Line geometry, in line heights (h) unless said otherwise.
HEADING_HEIGHT_RATIO = 1.6  # taller than this next to a line: a heading beside body text, not one paragraph
SAME_ROW_OVERLAP = 0.5  # vertical overlap (share of the smaller height) that puts two lines on one row
ROW_JOIN_GAP = 0.8  # a line this close to the right of another on its row continues it
ROW_PIECE_WIDTH = 8  # lines side by side on a row, each narrower than this, are pieces of one table row
ALIGNED_OVERLAP = 0.3  # horizontal overlap (share of the narrower line) that stacks one line under another
ALIGNED_LEFT_EDGE = 1.5  # ... or left edges this close
STACK_GAP_MIN, STACK_GAP_MAX = -0.3, 0.9  # vertical gap between stacked lines of one paragraph
PARAGRAPH_GAP = 0.8  # a larger gap between two lines starts a paragraph
BAND_GAP = 3  # a blank strip across the page this high ends a band of columns (reading_order._bands)
LIST_CONTINUATION_INDENT = 0.5  # a list item's next line indented this much continues it
SHORT_LINE_SHORTFALL = 4  # a line ending this far before the block's right edge ends its paragraph
FIRST_LINE_INDENT = 1.2  # an indent this deep under a line flush left starts a paragraph
FLUSH_LEFT = 0.5  # within this of the block's left edge counts as flush left

# Blocks, as shares of the page height or of the page's median (body) line height.
MARGIN_SHARE = 0.1  # the top and bottom tenth of a page are its margins (page numbers, running titles)
BODY_SIZE_RATIO = 1.1  # a "title" no taller than this times body text, reading like a sentence, is body text
SENTENCE_WORDS = 12  # ... or longer than this many words
TITLE_SIZE_RATIO = 1.3  # without a layout model, a short block this much taller than body text is a title
TITLE_MAX_WORDS = 15
LISTING_MIN_ROWS = 4  # rows opened by line numbers counting up that make a numbered listing (listings)
LISTING_NUMBER_STEP = 3  # ... each number at most this much above the last (the recogniser misses some)
PROSE_WORDS = 5  # words in a line of running text; table cells and labels have fewer (text_columns)
LAYOUT_MATCH_IOU = 0.5  # a region takes the layout model's score from the box it overlaps this much
TABLE_RESULT_SHARE = 0.5  # a table result belongs to the table region holding this share of its cells' span
