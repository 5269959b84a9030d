"""Borderless tables whose cells have little padding, their header row, and chars_text's spaces."""

from __future__ import annotations

from minuscule.documents.pdf import chars_text
from minuscule.documents.types import Char, TextLine
from minuscule.lite.borderless import split_tables
from minuscule.lite.engine import _headers_to_tables
from minuscule.lite.tables import Table
from lite_lines import letter_chars

SIZE = 10.0
ADV = 5.0  # fixed advance; letter boxes touch, so only space_before or a gap marks a word start

ROWS = [["Greedy", "0.845", "0.699", "0.765"],
        ["Baseline", "0.697", "0.940", "0.800"],
        ["Beam", "0.861", "0.712", "0.780"],
        ["Sampling", "0.802", "0.688", "0.741"]]
# Column starts: the numbers start 0.3 em after "Baseline"/"Sampling" (100..140), and 3 em apart further on.
COLS = [100.0, 143.0, 198.0, 253.0]


def chars(text: str, x: float, y0: float, bold: bool = False) -> list[Char]:
    return letter_chars(text, x, y0, SIZE, ADV, bold)


def piece(cs: list[Char], bold: bool = False) -> TextLine:
    text = "".join((" " if k and c.space_before else "") + c.text for k, c in enumerate(cs))
    box = (cs[0].bbox[0], cs[0].bbox[1], cs[-1].bbox[2], cs[0].bbox[3])
    return TextLine(text, box, SIZE, bold=bold, chars=tuple(cs))


def cell_chars(row: list[str], y0: float) -> list[list[Char]]:
    """The chars of each cell, the first letter of every cell after the first marked as a word start."""
    out = []
    for c, (text, x) in enumerate(zip(row, COLS)):
        cs = chars(text, x, y0)
        if c:
            cs[0] = Char(cs[0].text, cs[0].bbox, SIZE, space_before=True)
        out.append(cs)
    return out


def table_pieces(y0: float = 100.0) -> list[TextLine]:
    """What a text layer gives: a label 0.3 em or less from its number is one piece with it."""
    lines = []
    for r, row in enumerate(ROWS):
        cells = cell_chars(row, y0 + 14 * r)
        if cells[1][0].bbox[0] - cells[0][-1].bbox[2] < 0.5 * SIZE:
            lines += [piece(cells[0] + cells[1]), piece(cells[2]), piece(cells[3])]
        else:
            lines += [piece(cs) for cs in cells]
    return lines


def header_line(y0: float) -> TextLine:
    """ "Method Precision Recall F1", bold, words set at the column starts; "Precision" (45 px) is wider
    than its column of numbers (25 px) and reaches past the middle of the next column gap."""
    cs = []
    for k, (word, x) in enumerate(zip(["Method", "Precision", "Recall", "F1"], COLS)):
        w = chars(word, x, y0, bold=True)
        if k:
            w[0] = Char(w[0].text, w[0].bbox, SIZE, bold=True, space_before=True)
        cs += w
    return piece(cs, bold=True)


def grid(table: Table) -> list[list[str]]:
    return [[c.text for c in table.cells if c.row == r] for r in range(table.rows)]


def test_label_glued_to_its_number_is_split_at_the_narrow_column_gap():
    """Rows where "Baseline 0.697" is one piece still give four cells: the narrow gap is a column because
    the numbers' words all start at one x."""
    lines = table_pieces()
    assert [ln.text for ln in lines[:7]] == ["Greedy", "0.845", "0.699", "0.765", "Baseline 0.697", "0.940", "0.800"]
    out = split_tables(lines)
    assert len(out) == 1 and isinstance(out[0], Table)
    assert grid(out[0]) == ROWS
    assert (out[0].rows, out[0].cols) == (4, 4)


def test_header_row_moved_back_to_the_table_keeps_its_words_whole():
    """The header line that reading order left in the region above goes to the table's region, and
    becomes a bold header row with "Precision" whole."""
    para = [piece(chars("The scores of the four decoders on the test set follow.", 100, 60 + 14 * k)) for k in range(2)]
    header = header_line(86.0)  # 86..96, the first table row starts at 100
    rows = table_pieces(100.0)
    regions = _headers_to_tables([[*para, header], list(rows)])
    assert regions == [para, [header, *rows]]
    out = split_tables(regions[1])
    assert len(out) == 1 and isinstance(out[0], Table)
    table = out[0]
    assert grid(table) == [["Method", "Precision", "Recall", "F1"], *ROWS]
    assert all(c.bold for c in table.cells if c.row == 0)
    assert table.to_html().startswith("<table><tr><th>Method</th><th>Precision</th><th>Recall</th><th>F1</th></tr>")


def test_header_line_far_above_the_table_stays_in_its_region():
    """A last paragraph line 2 em above the table is not taken for its header row."""
    para = [piece(chars("Scores of four decoders:", 100, 60 + 14 * k)) for k in range(2)]  # 100..220, within the table
    rows = table_pieces(104.0)  # 20 px below the last line's bottom (84)
    regions = _headers_to_tables([list(para), list(rows)])
    assert regions == [para, rows]


def test_paragraph_lines_give_no_table():
    """Single-piece rows are text even when, in a fixed-advance font, their words start at shared x."""
    texts = ["Greedy decoding and the baseline agree on most", "items of the test set but beam search wins on the",
             "long items where the other two lose their way", "and sampling trails all three on every metric"]
    lines = [piece(chars(t, 100, 100 + 14 * k)) for k, t in enumerate(texts)]
    assert split_tables(lines) == [lines]


def test_chars_text_ignores_letter_gaps_of_exact_space_chars():
    """OCR letters (exact_spaces) get spaces only from space_before; text-layer chars also from a wide gap."""
    def run(exact: bool) -> list[Char]:
        boxes = [("a", 0, 5, False), ("b", 9, 14, False), ("c", 20, 25, True), ("d", 25, 30, False)]  # a|b gap 0.4 em
        return [Char(t, (x0, 0, x1, 10), 10.0, space_before=sp, exact_spaces=exact) for t, x0, x1, sp in boxes]

    assert chars_text(run(exact=True)) == "ab cd"
    assert chars_text(run(exact=False)) == "a b cd"
