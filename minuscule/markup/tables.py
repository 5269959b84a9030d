"""Tables in Markdown and HTML as cell grids with spans, neighbours and headings.

A cell is keyed by its top-left (row, col). Neighbour sets follow olmOCR-Bench: scanning from
every row (column) a spanned cell covers, the first different occupied cell in that direction
is a neighbour, so a spanned cell can have several. Markdown tables have no spans; their first
row and first column count as headings. In HTML, `<th>` cells and cells under `<thead>` do.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from minuscule.markup.html import Element, parse_html

Pos = tuple[int, int]


@dataclass(frozen=True)
class CellSpec:
    """One source cell before placement: its text, spans and whether it is a heading."""

    text: str
    rowspan: int = 1
    colspan: int = 1
    heading: bool = False


@dataclass(frozen=True)
class TableGrid:
    """A placed table. `occupancy[r][c]` is the key of the cell covering that slot, or None."""

    cells: dict[Pos, str]
    spans: dict[Pos, tuple[int, int]]  # (rowspan, colspan) as placed
    headings: frozenset[Pos]
    occupancy: tuple[tuple[Pos | None, ...], ...]
    source: str  # "html" or "markdown"
    # A row span cut short by a later overlapping cell still claims rows past the grid's end.
    # The published parser raises on such a table, which fails every table test of the page.
    overrun: bool = False
    # (relation, cell) -> neighbours, built on first use: scoring parses every table but asks about a few cells.
    _relations: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def up(self) -> dict[Pos, frozenset[Pos]]:
        return self._relation("up")

    @property
    def down(self) -> dict[Pos, frozenset[Pos]]:
        return self._relation("down")

    @property
    def left(self) -> dict[Pos, frozenset[Pos]]:
        return self._relation("left")

    @property
    def right(self) -> dict[Pos, frozenset[Pos]]:
        return self._relation("right")

    def _relation(self, name: str) -> dict[Pos, frozenset[Pos]]:
        return {pos: self.related(name, pos) for pos in self.cells}

    def related(self, name: str, pos: Pos) -> frozenset[Pos]:
        """The cells `name` ("up", "down", "left", "right") of the cell at `pos`; built per cell on
        first use, since a table test asks about a few cells of a table."""
        hit = self._relations.get((name, pos))
        if hit is None:
            hit = self._relations[(name, pos)] = _neighbour(self.spans, self.occupancy, name, pos)
        return hit

    @property
    def n_rows(self) -> int:
        return len(self.occupancy)

    @property
    def n_cols(self) -> int:
        return len(self.occupancy[0]) if self.occupancy else 0

    @property
    def is_rectangular(self) -> bool:
        return all(slot is not None for row in self.occupancy for slot in row)

    def dense(self) -> list[list[str | None]]:
        """Text of every slot (a spanned cell repeated in each slot it covers; None for holes)."""
        return [[self.cells[slot] if slot is not None else None for slot in row] for row in self.occupancy]

    def top_headings(self, pos: Pos) -> frozenset[Pos]:
        """Heading cells met walking up from `pos`; if none, the cells where the walk stops."""
        return self._walk(pos, "up")

    def left_headings(self, pos: Pos) -> frozenset[Pos]:
        """Heading cells met walking left from `pos`; if none, the cells where the walk stops."""
        return self._walk(pos, "left")

    def _walk(self, start: Pos, relation: str) -> frozenset[Pos]:
        found: set[Pos] = set()
        ends: set[Pos] = set()
        seen = {start}
        queue = deque([start])
        while queue:
            cur = queue.popleft()
            if cur in self.headings:
                found.add(cur)
            nexts = self.related(relation, cur) if cur in self.spans else frozenset()
            if not nexts:
                ends.add(cur)
            for nxt in nexts:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        found.discard(start)
        ends.discard(start)
        return frozenset(found or ends)


def build_grid(rows: list[list[CellSpec]], source: str = "html") -> TableGrid | None:
    """Place rows of cells on an occupancy grid (row spans carry down, later cells win overlaps)."""
    cells: dict[Pos, str] = {}
    spans: dict[Pos, tuple[int, int]] = {}
    headings: set[Pos] = set()
    occupancy: list[list[Pos | None]] = []
    # carry[c] = (cell, rows still to cover) for row spans coming down into column c
    carry: list[tuple[Pos, int] | None] = []

    for r, specs in enumerate(rows):
        line: list[Pos | None] = []
        c = 0
        i = 0
        while i < len(specs) or c < len(carry):
            if c < len(carry) and carry[c] is not None:
                key, left = carry[c]
                line.append(key)
                carry[c] = (key, left - 1) if left > 1 else None
                c += 1
                continue
            if i >= len(specs):
                line.append(None)
                c += 1
                continue
            spec = specs[i]
            i += 1
            rowspan, colspan = max(1, spec.rowspan), max(1, spec.colspan)
            key = (r, c)
            cells[key] = spec.text
            spans[key] = (rowspan, colspan)
            if spec.heading:
                headings.add(key)
            if len(carry) < c + colspan:
                carry.extend([None] * (c + colspan - len(carry)))
            for k in range(colspan):
                line.append(key)
                carry[c + k] = (key, rowspan - 1) if rowspan > 1 else None
            c += colspan
        occupancy.append(line)

    while any(entry is not None for entry in carry):
        line = []
        for c, entry in enumerate(carry):
            if entry is None:
                line.append(None)
                continue
            key, left = entry
            line.append(key)
            carry[c] = (key, left - 1) if left > 1 else None
        occupancy.append(line)

    used_cols = [c for line in occupancy for c, slot in enumerate(line) if slot is not None]
    if not cells or not used_cols:
        return None
    width = max(used_cols) + 1
    grid = tuple(tuple((line + [None] * width)[:width]) for line in occupancy)
    height = len(grid)

    overrun = any(r0 + rowspan > height for (r0, _), (rowspan, _) in spans.items())
    return TableGrid(cells=cells, spans=spans, headings=frozenset(headings), occupancy=grid, source=source,
                     overrun=overrun)


def _first(key: Pos, slots) -> Pos | None:
    for slot in slots:
        if slot is not None and slot != key:
            return slot
    return None


def _neighbour(spans: dict[Pos, tuple[int, int]], grid: tuple[tuple[Pos | None, ...], ...],
               name: str, key: Pos) -> frozenset[Pos]:
    """The nearest other cell in direction `name` from every slot the cell `key` covers."""
    height = len(grid)
    width = len(grid[0]) if grid else 0
    rowspan, colspan = spans[key]
    r0, c0 = key
    found: set[Pos] = set()
    if name in ("left", "right"):
        # A span cut short by a later overlapping cell may claim rows past the grid; skip those.
        for r in range(r0, min(r0 + rowspan, height)):
            slots = grid[r][c0 + colspan :] if name == "right" else reversed(grid[r][:c0])
            hit = _first(key, slots)
            if hit is not None:
                found.add(hit)
    elif name in ("up", "down"):
        for c in range(c0, min(c0 + colspan, width)):
            rows = range(r0 + rowspan, height) if name == "down" else range(r0 - 1, -1, -1)
            hit = _first(key, (grid[r][c] for r in rows))
            if hit is not None:
                found.add(hit)
    else:
        raise ValueError(f"unknown table relation {name!r}")
    return frozenset(found)


def _span(value: str | None) -> int:
    try:
        n = int(value) if value not in (None, "") else 1
    except (TypeError, ValueError):
        return 1
    return n if n > 0 else 1


_TABLE_OPEN = re.compile("<table", re.IGNORECASE)


def html_tables(markup: str) -> list[TableGrid]:
    """Every `<table>` in the string (nested ones too, each on its own), in document order."""
    if not _TABLE_OPEN.search(markup):
        return []
    return list(_html_tables(markup))


@lru_cache(maxsize=64)
def _html_tables(markup: str) -> tuple[TableGrid, ...]:
    root = parse_html(markup)
    out: list[TableGrid] = []
    for table in root.iter({"table"}):
        trs = list(table.iter({"tr"}))  # rows of nested tables belong to the outer one too
        rows: list[list[CellSpec]] = []
        for r, tr in enumerate(trs):
            in_head = tr.has_ancestor("thead")
            row: list[CellSpec] = []
            for cell in tr.child_elements({"th", "td"}):
                raw_rowspan = cell.attrs.get("rowspan")
                rowspan = _span(raw_rowspan)
                if isinstance(raw_rowspan, str) and raw_rowspan.strip() == "0":
                    rowspan = max(1, len(trs) - r)  # rowspan=0: down to the last row
                row.append(
                    CellSpec(
                        text=cell.text().strip(),
                        rowspan=rowspan,
                        colspan=_span(cell.attrs.get("colspan")),
                        heading=cell.name == "th" or in_head,
                    )
                )
            rows.append(row)
        if not rows:
            continue
        grid = build_grid(rows, "html")
        if grid is not None:
            out.append(grid)
    return tuple(out)


def _is_separator(line: str) -> bool:
    body = line.replace("|", "").strip()
    return bool(body) and all(ch in "- :" for ch in body)


def _pipe_rows(lines: list[str]) -> list[list[str]]:
    sep = next((i for i, line in enumerate(lines) if _is_separator(line)), None)
    rows: list[list[str]] = []
    for i, line in enumerate(lines):
        if i == sep or (line.strip() and all(ch in "- :|" for ch in line)):
            continue
        cells = [cell.strip() for cell in line.split("|")]
        if cells and cells[0] == "":
            cells = cells[1:]
        if cells and cells[-1] == "":
            cells = cells[:-1]
        if cells:
            rows.append(cells)
    return rows


def markdown_tables(text: str) -> list[TableGrid]:
    """Pipe tables: each maximal run of >= 2 consecutive lines containing `|` is one table."""
    if "|" not in text:
        return []
    return list(_markdown_tables(text))


@lru_cache(maxsize=64)
def _markdown_tables(text: str) -> tuple[TableGrid, ...]:
    out: list[TableGrid] = []
    run: list[str] = []
    for line in text.strip().split("\n") + [""]:  # the sentinel closes a trailing run
        if "|" in line:
            run.append(line)
            continue
        if len(run) >= 2:
            rows = _pipe_rows(run)
            specs = [[CellSpec(cell, heading=(r == 0 or c == 0)) for c, cell in enumerate(row)] for r, row in enumerate(rows)]
            grid = build_grid(specs, "markdown") if specs else None
            if grid is not None:
                out.append(grid)
        run = []
    return tuple(out)


def all_tables(text: str, markdown: bool = True) -> list[TableGrid]:
    """Markdown tables (unless `markdown` is False) followed by HTML tables, as the scorer orders them."""
    return (markdown_tables(text) if markdown else []) + html_tables(text)
