"""Mine olmOCR-Bench unit tests from a rendered page: what it knows it shows, where, and in which order."""

from __future__ import annotations

import random
from dataclasses import dataclass

from minuscule.synth.blocks import Figure, Formula, Heading, ListBlock, Paragraph, Table, sentence_is_plain
from minuscule.synth.reference import table_md

MAX_PRESENT_SENTENCES = 6
MAX_PRESENT_LINES = 6
MAX_ORDER = 8
MAX_TABLE_CELLS_PER_TABLE = 4
MAX_TABLE_TESTS = 16
MAX_MATH = 20
MIN_LINE_WORDS = 3
MIN_LINE_CHARS = 15


@dataclass(frozen=True)
class Line:
    """One printed text line that is a verbatim run of a single text node of one block."""

    block: int
    region: int
    column: int
    text: str


def _fuzz_budget(text: str) -> int:
    # About 2% of the characters, as olmOCR's synthetic order tests use.
    return len(text) // 50


def column_lines(layout: dict) -> dict[tuple[int, int], list[list[tuple[int, int, str, float]]]]:
    """Group measured words into lines per (region, column); each word is (block, seg, text, left)."""
    regions = {g["r"]: g for g in layout["regions"]}
    block_region = {b[0]: b[1] for b in layout["boxes"]}
    per_column: dict[tuple[int, int], list[tuple[float, float, float, int, int, str]]] = {}
    for block, seg, text, left, top, bottom in layout["words"]:
        r = block_region.get(block, -1)
        g = regions.get(r)
        if g is None:
            continue
        n = max(1, int(g["columns"]))
        col_w = (g["width"] - (n - 1) * g["gap"]) / n
        col = min(n - 1, max(0, int((left - g["left"] + 0.5) // (col_w + g["gap"]))))
        per_column.setdefault((r, col), []).append((top, bottom, left, block, seg, text))
    out: dict[tuple[int, int], list[list[tuple[int, int, str, float]]]] = {}
    for key, words in per_column.items():
        words.sort(key=lambda w: (w[0], w[2]))
        lines: list[list[tuple[float, float, float, int, int, str]]] = []
        for w in words:
            if lines and w[0] < lines[-1][0][0] + 0.5 * (lines[-1][0][1] - lines[-1][0][0]):
                lines[-1].append(w)
            else:
                lines.append([w])
        out[key] = [[(w[3], w[4], w[5], w[2]) for w in sorted(line, key=lambda w: w[2])] for line in lines]
    return out


def _as_line(words: list[tuple[int, int, str, float]], region: int, column: int) -> Line | None:
    blocks = {w[0] for w in words}
    segs = {w[1] for w in words}
    if len(blocks) != 1 or len(segs) != 1 or next(iter(segs)) <= 0:
        return None
    text = " ".join(w[2] for w in words)
    if len(words) < MIN_LINE_WORDS or len(text) < MIN_LINE_CHARS:
        return None
    return Line(words[0][0], region, column, text)


def edge_lines(layout: dict) -> list[tuple[Line | None, Line | None]]:
    """(first line, last line) of every column, in reading order (regions, then columns)."""
    grouped = column_lines(layout)
    out = []
    for (r, c) in sorted(grouped):
        lines = grouped[(r, c)]
        out.append((_as_line(lines[0], r, c), _as_line(lines[-1], r, c)))
    return out


class PageMiner:
    """Builds candidate test records for one page; `records()` returns them in a fixed order."""

    def __init__(self, page, page_id: str, pdf: str, rng: random.Random):
        self.page = page
        self.page_id = page_id
        self.pdf = pdf
        self.rng = rng
        self._records: list[dict] = []
        self._count: dict[str, int] = {}

    def _add(self, kind: str, fields: dict, max_diffs: int = 0) -> None:
        k = self._count.get(kind, 0)
        self._count[kind] = k + 1
        record = {"pdf": self.pdf, "page": 1, "id": f"{self.page_id}_{kind}_{k:02d}", "type": kind,
                  "max_diffs": max_diffs, "checked": None, "url": None}
        record.update(fields)
        self._records.append(record)

    def records(self) -> list[dict]:
        page = self.page
        kept = list(page.kept)
        blocks = {i: page.spec.blocks[i] for i in kept}
        edges = edge_lines(page.layout)
        self._present(blocks, edges)
        self._absent()
        self._order(blocks, kept, edges)
        self._tables(blocks)
        self._math(blocks)
        self._add("baseline", {"max_length": None, "max_length_skips_image_alt_tags": False, "max_repeats": 30,
                               "check_disallowed_characters": True})
        return self._records

    # ---- present ----------------------------------------------------------------------
    def _plain_sentences(self, blocks: dict) -> list[tuple[int, str]]:
        out = []
        for i, b in blocks.items():
            sentences = b.sentences if isinstance(b, Paragraph) else b.items if isinstance(b, ListBlock) else ()
            for s in sentences:
                if sentence_is_plain(s) and 25 <= len(s[0].text) <= 300:
                    out.append((i, s[0].text))
        return out

    def _present(self, blocks: dict, edges: list[tuple[Line | None, Line | None]]) -> None:
        texts: list[str] = []
        for first, last in edges:
            for line in (first, last):
                if line is not None and line.text not in texts:
                    texts.append(line.text)
        lines = texts[:MAX_PRESENT_LINES]
        sentences = [t for _, t in self._plain_sentences(blocks) if t not in lines]
        picked = self.rng.sample(sentences, min(MAX_PRESENT_SENTENCES, len(sentences)))
        headings = [b.text for b in blocks.values() if isinstance(b, Heading) and len(b.text) >= 8]
        if headings:
            picked.append(self.rng.choice(headings))
        captions = [b.caption for b in blocks.values() if isinstance(b, (Table, Figure)) and len(b.caption) >= 15]
        if captions:
            picked.append(self.rng.choice(captions))
        for text in lines + picked:
            self._add("present", {"text": text, "case_sensitive": True, "first_n": None, "last_n": None},
                      _fuzz_budget(text))

    # ---- absent -----------------------------------------------------------------------
    def _absent(self) -> None:
        heads = self.page.heads
        for text in heads.header + heads.footer:
            self._add("absent", {"text": text, "case_sensitive": False, "first_n": None, "last_n": None},
                      round(0.05 * len(text)))
        if heads.page_number:
            self._add("absent", {"text": heads.page_number, "case_sensitive": False, "first_n": None,
                                 "last_n": None}, 0)

    # ---- order ------------------------------------------------------------------------
    def _order(self, blocks: dict, kept: list[int], edges: list[tuple[Line | None, Line | None]]) -> None:
        pairs: list[tuple[str, str]] = []
        # Column breaks: the last line of a column comes before the first line of the next one.
        for (_, last), (first, _) in zip(edges, edges[1:]):
            if last is not None and first is not None and last.text != first.text:
                pairs.append((last.text, first.text))
        # Sentences of different blocks, preferring blocks that sit in different columns or regions.
        where = _block_columns(self.page.layout)
        sentences = self._plain_sentences(blocks)
        rank = {b: k for k, b in enumerate(kept)}
        candidates = []
        for a in range(len(sentences)):
            for b in range(a + 1, len(sentences)):
                (ia, ta), (ib, tb) = sentences[a], sentences[b]
                if ia != ib and rank[ia] < rank[ib] and ta != tb:
                    candidates.append((where.get(ia) != where.get(ib), ta, tb))
        self.rng.shuffle(candidates)
        candidates.sort(key=lambda c: not c[0])
        for _, ta, tb in candidates:
            if len(pairs) >= MAX_ORDER:
                break
            pairs.append((ta, tb))
        for before, after in pairs[:MAX_ORDER]:
            budget = min(_fuzz_budget(before), _fuzz_budget(after))
            self._add("order", {"before": before, "after": after}, budget)

    # ---- table ------------------------------------------------------------------------
    def _tables(self, blocks: dict) -> None:
        from minuscule.markup.tables import html_tables

        made = 0
        for block in blocks.values():
            if not isinstance(block, Table) or made >= MAX_TABLE_TESTS:
                continue
            grids = html_tables(table_md(block))
            if not grids:
                continue
            grid = grids[0]
            cells = [p for p in sorted(grid.cells) if p not in grid.headings and len(grid.cells[p].strip()) >= 3]
            for pos in self.rng.sample(cells, min(MAX_TABLE_CELLS_PER_TABLE, len(cells))):
                if made >= MAX_TABLE_TESTS:
                    break
                fields = {"cell": grid.cells[pos].strip()}
                relations = {
                    **{name: grid.related(name, pos) for name in ("up", "down", "left", "right")},
                    "top_heading": grid.top_headings(pos), "left_heading": grid.left_headings(pos),
                }
                names = [n for n, rel in relations.items() if any(grid.cells[q].strip() for q in rel)]
                for name in self.rng.sample(names, min(len(names), self.rng.randint(1, 3))):
                    texts = sorted(grid.cells[q].strip() for q in relations[name] if grid.cells[q].strip())
                    fields[name] = self.rng.choice(texts)
                out = {"cell": fields["cell"]}
                for name in ("up", "down", "left", "right", "top_heading", "left_heading"):
                    out[name] = fields.get(name, "")
                out["ignore_markdown_tables"] = False
                self._add("table", out)
                made += 1

    # ---- math -------------------------------------------------------------------------
    def _math(self, blocks: dict) -> None:
        seen: list[str] = []
        for block in blocks.values():
            if isinstance(block, Formula) and block.latex not in seen and len(seen) < MAX_MATH:
                seen.append(block.latex)
                self._add("math", {"math": block.latex, "ignore_dollar_delimited": False})


def _block_columns(layout: dict) -> dict[int, tuple[int, int]]:
    """(region, column) of each block's top-left corner."""
    regions = {g["r"]: g for g in layout["regions"]}
    out = {}
    for b, r, left, top, right, bottom in layout["boxes"]:
        g = regions.get(r)
        if g is None:
            continue
        n = max(1, int(g["columns"]))
        col_w = (g["width"] - (n - 1) * g["gap"]) / n
        out[b] = (r, min(n - 1, max(0, int((left - g["left"] + 0.5) // (col_w + g["gap"])))))
    return out
