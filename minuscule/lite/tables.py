"""Ruled tables: ruling lines → cell grid with spans → chars assigned to cells → HTML."""

from __future__ import annotations

import html
from dataclasses import dataclass, replace

from minuscule.documents.pdf import chars_text, word_runs
from minuscule.documents.types import BBox, Char, Rule, TextLine

_TOL = 3.0  # pixels: rules that meet within this distance touch


@dataclass
class Cell:
    row: int
    col: int
    rowspan: int
    colspan: int
    bbox: BBox
    text: str = ""
    bold: bool = False


@dataclass
class Table:
    bbox: BBox
    rows: int
    cols: int
    cells: list[Cell]  # top-left anchored, in row-major order

    def to_html(self) -> str:
        out = ["<table>"]
        header = self.rows > 1 and all(c.bold for c in self.cells if c.row == 0 and c.text)
        for r in range(self.rows):
            tag = "th" if header and r == 0 else "td"
            row_cells = [c for c in self.cells if c.row == r]
            out.append("<tr>" + "".join(_cell_html(tag, c) for c in row_cells) + "</tr>")
        out.append("</table>")
        return "".join(out)


def _cell_html(tag: str, c: Cell) -> str:
    attrs = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (f' colspan="{c.colspan}"' if c.colspan > 1 else "")
    return f"<{tag}{attrs}>{html.escape(c.text, quote=False)}</{tag}>"


def find_tables(rules: list[Rule], lines: list[TextLine]) -> tuple[list[Table], list[TextLine]]:
    """Tables drawn with rules on all sides of their cells, and the lines that are not inside any table."""
    tables = []
    for group in _connected(rules):
        table = _grid(group)
        if table is not None:
            tables.append(table)
    if not tables:
        return [], lines
    rest = []
    inside: dict[int, list[TextLine]] = {i: [] for i in range(len(tables))}
    for line in lines:
        cx, cy = (line.bbox[0] + line.bbox[2]) / 2, (line.bbox[1] + line.bbox[3]) / 2
        hit = next((i for i, t in enumerate(tables) if _contains(t.bbox, cx, cy)), None)
        (inside[hit] if hit is not None else rest).append(line)
    for i, table in enumerate(tables):
        _fill(table, inside[i])
        _drop_thin_empty_rows(table)
    return tables, rest


def _contains(b: BBox, x: float, y: float, pad: float = 0.0) -> bool:
    return b[0] - pad <= x <= b[2] + pad and b[1] - pad <= y <= b[3] + pad


def _touch(a: Rule, b: Rule) -> bool:
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.bbox, b.bbox
    return ax0 - _TOL <= bx1 and bx0 - _TOL <= ax1 and ay0 - _TOL <= by1 and by0 - _TOL <= ay1


def _connected(rules: list[Rule]) -> list[list[Rule]]:
    """Groups of rules that touch each other (one group per drawn table or box)."""
    parent = list(range(len(rules)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    order = sorted(range(len(rules)), key=lambda i: rules[i].bbox[0])
    for pos, i in enumerate(order):  # sweep over x so that only nearby rules are compared
        for j in order[pos + 1:]:
            if rules[j].bbox[0] > rules[i].bbox[2] + _TOL:
                break
            if _touch(rules[i], rules[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[Rule]] = {}
    for i, r in enumerate(rules):
        groups.setdefault(find(i), []).append(r)
    return list(groups.values())


def _positions(values: list[float]) -> list[float]:
    """Distinct coordinates: values closer than the tolerance are one line (double rules count once)."""
    out: list[float] = []
    for v in sorted(values):
        if out and v - out[-1] <= _TOL:
            continue
        out.append(v)
    return out


def _grid(rules: list[Rule]) -> Table | None:
    hs = [r for r in rules if r.horizontal]
    vs = [r for r in rules if not r.horizontal]
    if len(hs) < 2 or len(vs) < 2:
        return None
    ys = _positions([(r.bbox[1] + r.bbox[3]) / 2 for r in hs])
    xs = _positions([(r.bbox[0] + r.bbox[2]) / 2 for r in vs])
    if len(ys) < 2 or len(xs) < 2 or (len(ys) == 2 and len(xs) == 2):
        return None  # a single framed box is a frame, not a table
    n_rows, n_cols = len(ys) - 1, len(xs) - 1

    def v_edge(x: float, y: float) -> bool:
        return any(abs((r.bbox[0] + r.bbox[2]) / 2 - x) <= _TOL and r.bbox[1] - _TOL <= y <= r.bbox[3] + _TOL for r in vs)

    def h_edge(y: float, x: float) -> bool:
        return any(abs((r.bbox[1] + r.bbox[3]) / 2 - y) <= _TOL and r.bbox[0] - _TOL <= x <= r.bbox[2] + _TOL for r in hs)

    # Union-find over grid slots: a missing rule between two slots means they are one (spanning) cell.
    parent = list(range(n_rows * n_cols))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(n_rows):
        ym = (ys[r] + ys[r + 1]) / 2
        for c in range(n_cols):
            xm = (xs[c] + xs[c + 1]) / 2
            if c + 1 < n_cols and not v_edge(xs[c + 1], ym):
                parent[find(r * n_cols + c)] = find(r * n_cols + c + 1)
            if r + 1 < n_rows and not h_edge(ys[r + 1], xm):
                parent[find(r * n_cols + c)] = find((r + 1) * n_cols + c)
    spans: dict[int, list[int]] = {}
    for r in range(n_rows):
        for c in range(n_cols):
            root = find(r * n_cols + c)
            s = spans.setdefault(root, [r, c, r, c])
            s[0], s[1], s[2], s[3] = min(s[0], r), min(s[1], c), max(s[2], r), max(s[3], c)
    cells = [Cell(r0, c0, r1 - r0 + 1, c1 - c0 + 1, (xs[c0], ys[r0], xs[c1 + 1], ys[r1 + 1]))
             for r0, c0, r1, c1 in spans.values()]
    cells.sort(key=lambda c: (c.row, c.col))
    return Table(bbox=(xs[0], ys[0], xs[-1], ys[-1]), rows=n_rows, cols=n_cols, cells=cells)


def _drop_thin_empty_rows(table: Table) -> None:
    """Rows with no text that are much lower than the others are the gap inside a double rule (booktabs
    style, or one rule seen twice in a scan), not rows of the table."""
    heights = {c.row: c.bbox[3] - c.bbox[1] for c in table.cells if c.rowspan == 1}
    filled = {r for c in table.cells if c.text for r in range(c.row, c.row + c.rowspan)}
    usual = sorted(h for r, h in heights.items() if r in filled)
    if not usual:
        return
    median = usual[len(usual) // 2]
    drop = sorted(r for r, h in heights.items() if r not in filled and h < 0.6 * median)
    if not drop or len(drop) == table.rows:
        return
    cells = []
    for c in table.cells:
        rows = [r for r in range(c.row, c.row + c.rowspan) if r not in drop]
        if not rows:
            continue
        c.rowspan = len(rows)
        c.row = rows[0] - sum(1 for r in drop if r < rows[0])
        cells.append(c)
    table.cells = cells
    table.rows -= len(drop)


def _fill(table: Table, lines: list[TextLine]) -> None:
    """Put each char in the cell that holds its centre; a cell's lines are joined with spaces."""
    per_cell: dict[int, list[list[Char]]] = {}
    for line in sorted(lines, key=lambda ln: (ln.bbox[1], ln.bbox[0])):
        if not line.chars:  # an OCR line has no chars: it goes whole to the cell that holds its centre
            line = replace(line, chars=(Char(line.text, line.bbox, line.size, line.bold),))
        current: dict[int, list[Char]] = {}
        # OCR letter boxes are approximate: a word goes whole to the cell that holds its centre.
        units = word_runs(line.chars) if line.chars[0].exact_spaces else [[ch] for ch in line.chars]
        for unit in units:
            cx = (unit[0].bbox[0] + unit[-1].bbox[2]) / 2
            cy = (unit[0].bbox[1] + unit[0].bbox[3]) / 2
            idx = next((i for i, c in enumerate(table.cells) if _contains(c.bbox, cx, cy)), None)
            if idx is not None:
                current.setdefault(idx, []).extend(unit)
        for idx, chars in current.items():
            per_cell.setdefault(idx, []).append(chars)
    for idx, runs in per_cell.items():
        cell = table.cells[idx]
        cell.text = " ".join(chars_text(run) for run in runs).strip()
        letters = [ch for run in runs for ch in run if ch.text.isalnum()]
        cell.bold = bool(letters) and sum(ch.bold for ch in letters) > len(letters) / 2
