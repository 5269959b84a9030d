"""Tables without ruling lines: runs of rows whose pieces line up in columns separated by wide gaps."""

from __future__ import annotations

import re
import statistics

from minuscule.documents.pdf import chars_text, word_runs
from minuscule.documents.types import TextLine
from minuscule.lite.blocks import BULLET, CAPTION, NUMBERED, group_rows
from minuscule.lite.tables import Cell, Table

MIN_ROWS = 3  # rows with several pieces; fewer are more often equation numbers or labels than a table
_MARKER = re.compile(r"^(" + BULLET.pattern[1:-3] + r"|\(?\d{1,3}[.)]|\(\d{1,3}\))$")


def split_tables(lines: list[TextLine]) -> list[list[TextLine] | Table]:
    """The lines of one column, with runs that form a borderless table replaced by a Table, in order."""
    rows = group_rows(lines)
    out: list[list[TextLine] | Table] = []
    pending: list[TextLine] = []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and len(rows[j]) >= 2 and not _is_list_row(rows[j]):
            j += 1
        table = _table(rows, i, j) if j - i >= MIN_ROWS else None
        if table is None:
            pending += rows[i]
            i += 1
            continue
        start, table = table
        if start < i:  # the header row above the run was taken into the table
            header = rows[start]
            pending = [ln for ln in pending if ln not in header]
        if pending:
            out.append(pending)
            pending = []
        out.append(table)
        i = j
    if pending:
        out.append(pending)
    return out


def _is_list_row(row: list[TextLine]) -> bool:
    return bool(_MARKER.match(row[0].text.strip()))


def _gaps(row_sets: list[list[TextLine]], em: float) -> list[tuple[float, float]]:
    """Column gaps: strips no piece crosses, or narrower strips no word crosses where the next column's
    words start (or the previous column's words end) right at the strip in most rows, as cells with
    little padding do. "Right at" allows half an em: OCR letter boxes are only roughly placed."""
    gaps = _free([(ln.bbox[0], ln.bbox[2]) for row in row_sets for ln in row], 0.8 * em)
    rows = [[w for ln in row for w in _words(ln)] for row in row_sets]
    if not any(rows):
        return gaps
    need = max(2, (len(row_sets) + 1) // 2)
    near = 0.5 * em
    for a, b in _free([w for row in rows for w in row], 0.2 * em):
        if any(min(b, g1) > max(a, g0) for g0, g1 in gaps):
            continue
        starts = sum(1 for row in rows if any(b <= w[0] <= b + near for w in row))
        ends = sum(1 for row in rows if any(a - near <= w[1] <= a for w in row))
        if starts >= need or ends >= need:
            gaps.append((a, b))
    return sorted(gaps)


def _free(spans: list[tuple[float, float]], min_width: float) -> list[tuple[float, float]]:
    spans = sorted(spans)
    gaps, edge = [], spans[0][1]
    for a, b in spans[1:]:
        if a - edge >= min_width:
            gaps.append((edge, a))
        edge = max(edge, b)
    return gaps


def _words(line: TextLine) -> list[tuple[float, float]]:
    """x extents of the words of a line."""
    return [(min(c.bbox[0] for c in w), max(c.bbox[2] for c in w)) for w in word_runs(line.chars)]


def _table(rows: list[list[TextLine]], i: int, j: int) -> tuple[int, Table] | None:
    run = rows[i:j]
    em = statistics.median(ln.size for row in run for ln in row) or 1.0
    # A centred header word wider than its column's numbers may bridge a gap: with enough rows, the
    # gaps come from the rows below the first, and the first row's words are assigned by their centres.
    gaps = _gaps(run[1:] if len(run) >= 4 else run, em)
    if not gaps:
        return None
    x0 = min(ln.bbox[0] for row in run for ln in row)
    x1 = max(ln.bbox[2] for row in run for ln in row)
    widths = [ln.bbox[2] - ln.bbox[0] for row in run for ln in row]
    if statistics.mean(widths) > 0.45 * (x1 - x0):
        return None  # long pieces side by side are text columns, not cells
    seps = [(a + b) / 2 for a, b in gaps]
    start = i
    if i > 0 and len(rows[i - 1]) <= len(seps) + 1:
        head = rows[i - 1]
        gap = run[0][0].bbox[1] - max(ln.bbox[3] for ln in head)
        if gap < 1.5 * em and all(ln.chars for ln in head) and len(_split(head, seps)) >= 2 and not is_caption(head):
            start = i - 1
    table_rows = [_split(row, seps) for row in rows[start:j]]
    n_cols = len(seps) + 1
    cells = []
    for r, parts in enumerate(table_rows):
        for c in range(n_cols):
            text, bold, box = parts.get(c, ("", False, None))
            cells.append(Cell(r, c, 1, 1, box or (0, 0, 0, 0), text, bold))
    y0 = min(ln.bbox[1] for row in rows[start:j] for ln in row)
    y1 = max(ln.bbox[3] for row in rows[start:j] for ln in row)
    return start, Table(bbox=(x0, y0, x1, y1), rows=len(table_rows), cols=n_cols, cells=cells)


def _split(row: list[TextLine], seps: list[float]) -> dict[int, tuple[str, bool, tuple]]:
    """Column index → (text, bold, box) for one row; a line that crosses a separator is cut at its chars."""
    pieces: dict[int, list] = {}
    for ln in row:
        if ln.chars:
            groups: dict[int, list] = {}
            # Whole words go to a column: a header word wider than its column's numbers may reach
            # past the middle of the gap.
            for word in word_runs(ln.chars):
                centre = (word[0].bbox[0] + word[-1].bbox[2]) / 2
                groups.setdefault(_column(centre, seps), []).extend(word)
            for col, chars in groups.items():
                box = (min(c.bbox[0] for c in chars), min(c.bbox[1] for c in chars),
                       max(c.bbox[2] for c in chars), max(c.bbox[3] for c in chars))
                letters = [c for c in chars if c.text.isalnum()] or chars
                pieces.setdefault(col, []).append((chars_text(chars).strip(), sum(c.bold for c in letters) * 2 > len(letters), box))
        else:
            col = _column((ln.bbox[0] + ln.bbox[2]) / 2, seps)
            pieces.setdefault(col, []).append((ln.text, ln.bold, ln.bbox))
    return {col: (" ".join(t for t, _, _ in p), all(b for _, b, _ in p),
                  (min(x[2][0] for x in p), min(x[2][1] for x in p), max(x[2][2] for x in p), max(x[2][3] for x in p)))
            for col, p in pieces.items()}


def _column(x: float, seps: list[float]) -> int:
    return sum(1 for s in seps if x > s)


def is_caption(row: list[TextLine]) -> bool:
    """A caption or a sentence above a table is not its header row."""
    text = " ".join(ln.text for ln in sorted(row, key=lambda ln: ln.bbox[0])).strip()
    return bool(CAPTION.match(text)) or text.endswith(".")

