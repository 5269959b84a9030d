"""Split a Markdown page into running text, formulas and tables (cached: references are scored many times)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from minuscule.markup.math import Formula, find_formulas
from minuscule.markup.tables import TableGrid, html_tables, markdown_tables
from minuscule.markup.text import normalize_text

# Start and end tags of the elements that make up an HTML table.
_TABLE_TAG = re.compile(r"<(/?)table\b[^>]*>", re.IGNORECASE)
# A pipe table needs its `|---|` separator row; runs of `|` lines without one are left as text,
# so that `|x|` in consecutive lines of prose or LaTeX is not read as a table.
_PIPE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_TAG = re.compile(r"<[^>\n]{1,200}>")
_HEADING_MARK = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)


Cell = tuple[str, int, int]  # normalised text, rowspan, colspan


@dataclass(frozen=True)
class Table:
    """One table as rows of cells, the shape TEDS compares (th read as td, thead/tbody dropped)."""

    rows: tuple[tuple[Cell, ...], ...]
    source: str  # "html" or "markdown"

    @property
    def n_nodes(self) -> int:
        """Nodes below the table root: rows plus cells (the TEDS normaliser)."""
        return len(self.rows) + sum(len(row) for row in self.rows)

    @property
    def text(self) -> str:
        return " ".join(cell[0] for row in self.rows for cell in row)

    def to_html(self) -> str:
        """The canonical `<html><body><table>` string that `bench.omnidoc.teds.teds` reads."""
        from html import escape

        out = ["<html><body><table>"]
        for row in self.rows:
            out.append("<tr>")
            out.extend(f'<td colspan="{c}" rowspan="{r}">{escape(t)}</td>' for t, r, c in row)
            out.append("</tr>")
        out.append("</table></body></html>")
        return "".join(out)


@dataclass(frozen=True)
class PageParts:
    """What the terms read from a page. `text` is normalised running text (tables, formulas and
    tags removed); `formulas` are the delimited formulas outside tables."""

    raw: str
    prose: str  # the page with tables and formulas cut out, not normalised
    text: str  # prose with back-to-back repeated line blocks collapsed, tags dropped, normalised
    formulas: tuple[Formula, ...]
    tables: tuple[Table, ...]
    html_table_spans: tuple[tuple[int, int, bool], ...]  # (start, end, closed) of outermost HTML tables
    pipe_tables: int


@lru_cache(maxsize=1 << 16)  # outputs for one page share most cell texts
def _cell_text(text: str) -> str:
    """normalize_text of a cell, skipped for plain ASCII without emphasis or tags (most cells),
    where it could only collapse whitespace."""
    if text.isascii() and not any(ch in text for ch in "*_<"):
        return " ".join(text.split())
    return normalize_text(text).strip()


def _grid_table(grid: TableGrid) -> Table:
    rows: dict[int, list[tuple[int, Cell]]] = {}
    for (r, c), text in grid.cells.items():
        rowspan, colspan = grid.spans[(r, c)]
        rows.setdefault(r, []).append((c, (_cell_text(text), rowspan, colspan)))
    return Table(tuple(tuple(cell for _, cell in sorted(rows[r])) for r in sorted(rows)), grid.source)


def html_table_spans(text: str) -> list[tuple[int, int, bool]]:
    """Outermost `<table>…</table>` spans; an unclosed table runs to the end of the text."""
    spans: list[tuple[int, int, bool]] = []
    depth, start = 0, 0
    for m in _TABLE_TAG.finditer(text):
        if not m.group(1):
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, m.end(), True))
    if depth:
        spans.append((start, len(text), False))
    return spans


def _pipe_blocks(text: str) -> list[tuple[int, int]]:
    """Character spans of pipe tables: runs of >= 2 lines with `|` that include a separator row."""
    blocks: list[tuple[int, int]] = []
    pos, run_start, run_end, has_sep = 0, None, 0, False
    for line in text.split("\n") + [""]:
        end = pos + len(line)
        if "|" in line:
            if run_start is None:
                run_start, has_sep = pos, False
            run_end = end
            has_sep = has_sep or bool(_PIPE_SEPARATOR.match(line))
        else:
            if run_start is not None and has_sep and text.count("\n", run_start, run_end) >= 1:
                blocks.append((run_start, run_end))
            run_start = None
        pos = end + 1
    return blocks


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(spans):
        out.append(text[last:start])
        out.append("\n")
        last = max(last, end)
    out.append(text[last:])
    return "".join(out)


def collapse_loops(text: str, max_period: int = 8) -> str:
    """Drop back-to-back repeats of a block of 1..max_period lines, keeping its first copy."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        out.append(line)
        for period in range(1, min(max_period, len(out) // 2) + 1):
            # A repeated block ends with the line `period` back; testing that first skips most slices.
            if out[-1] == out[-1 - period] and out[-period:] == out[-2 * period : -period]:
                del out[-period:]
                break
    return "\n".join(out)


def content_text(text: str) -> str:
    """Running text for the content term: tags dropped (their text kept), heading marks dropped, normalised."""
    text = _HEADING_MARK.sub("", text)
    text = _TAG.sub(" ", text)
    return normalize_text(text).strip()


@lru_cache(maxsize=1024)
def split_page(markdown: str) -> PageParts:
    """Parse once: HTML tables (via markup.html_tables), pipe tables (markup.markdown_tables),
    formulas outside tables (markup.find_formulas) and the rest as normalised text."""
    spans = html_table_spans(markdown)
    # The whole page is parsed (not each span) so that the parse is the one `markup.html_tables`
    # caches for the table unit tests of the same text. A nested table counts as a table too.
    tables = [_grid_table(g) for g in html_tables(markdown)] if spans else []
    no_html = _cut(markdown, [(s, e) for s, e, _ in spans])
    pipes = _pipe_blocks(no_html)
    for start, end in pipes:
        tables.extend(_grid_table(g) for g in markdown_tables(no_html[start:end]))
    rest = _cut(no_html, pipes)
    formulas = find_formulas(rest)
    prose = _cut(rest, [(f.start, f.end) for f in formulas])
    return PageParts(
        raw=markdown,
        prose=prose,
        text=content_text(collapse_loops(prose)),
        formulas=tuple(formulas),
        tables=tuple(tables),
        html_table_spans=tuple(spans),
        pipe_tables=len(pipes),
    )
