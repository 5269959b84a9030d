"""LiteEngine: pages → PageResults from the PDF text layer, or RapidOCR for image-only pages."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Iterable, Iterator

from minuscule.documents.pdf import SOFT_HYPHEN
from minuscule.documents.types import Block, Page, PageResult, Rule, TextLine
from minuscule.lite.blocks import Style, attach_bullets, column_blocks, merge_blocks, rows_of
from minuscule.lite.borderless import is_caption, split_tables
from minuscule.lite.deskew import deskew
from minuscule.lite.furniture import find_furniture
from minuscule.lite.image_rules import detect_rules
from minuscule.lite.layout import ReadingOrder
from minuscule.lite.ocr import ocr_backend, ocr_lines
from minuscule.lite.rejoin import rejoin_lines
from minuscule.lite.tables import Table, find_tables

NAME = "lite"


class LiteEngine:
    """CPU-only engine. Born-digital pages need no OCR; pages without a text layer are OCRed."""

    name = NAME

    def parse_page(self, page: Page) -> PageResult:
        return next(iter(self.parse_pages([page])))

    def parse_pages(self, pages: Iterable[Page]) -> Iterator[PageResult]:
        """Results in page order. Furniture (running headers/footers) is judged over all given pages,
        so lines are read for every page first; OCR happens in that first pass too."""
        pages = list(pages)
        started = [time.perf_counter()]
        read: list[tuple[list[TextLine], str, float]] = []
        scanned: dict[int, tuple[list[Rule], float]] = {}
        for i, page in enumerate(pages):
            t0 = time.perf_counter()
            if page.has_text:
                read.append((list(page.text_layer.lines), "text-layer", 0.0))
            else:
                # Straighten first: OCR reads level lines best, and ruling lines must be level to be found.
                image, angle = deskew(page.image)
                read.append((ocr_lines(image), "ocr", time.perf_counter() - t0))
                scanned[i] = (detect_rules(image), angle)
            started.append(time.perf_counter())
        marks = find_furniture([(lines, page.height) for (lines, _, _), page in zip(read, pages)])
        # One typography for the whole document (per source), so that heading levels agree across pages.
        # OCR box heights depend on each page's scan (blur grows them), so scanned pages get their own.
        doc_style = Style.of([ln for (lines, s, _), m in zip(read, marks) if s == "text-layer"
                              for k, ln in enumerate(lines) if k not in m], factor=1.15)
        for i, page in enumerate(pages):
            t0 = time.perf_counter()
            lines, source, ocr_s = read[i]
            rules, angle = scanned.get(i, (page.text_layer.rules if page.text_layer else [], 0.0))
            style = doc_style if source == "text-layer" else Style.of(
                [ln for k, ln in enumerate(lines) if k not in marks[i]], factor=1.3)
            result = self._layout(page, lines, marks[i], style, rules)
            result.seconds = (started[i + 1] - started[i]) + (time.perf_counter() - t0)
            result.stats = {"source": source, "lines": len(lines), "ocr_seconds": round(ocr_s, 3)}
            if source == "ocr":
                result.stats["deskew_degrees"] = angle
                result.stats["ocr_backend"] = ocr_backend()
            yield result

    def _layout(self, page: Page, lines: list[TextLine], marks: dict[int, str], style: Style,
                rules: list[Rule]) -> PageResult:
        furniture = [Block(marks[i], ln.bbox, ln.text) for i, ln in enumerate(lines) if i in marks]
        body = [ln for i, ln in enumerate(lines) if i not in marks and ln.text.strip()]
        tables: list[Table] = []
        if rules:
            tables, body = find_tables(rules, body)
        body = rejoin_lines(body, size_tol=0.2 if page.has_text else 0.35)
        if page.text_layer is not None and page.text_layer.marks:
            body = attach_bullets(body, page.text_layer.marks)
        blocks: list[Block] = []
        for region in _headers_to_tables(ReadingOrder([*body, *tables]).regions()):
            pending: list[TextLine] = []
            for item in [*region, None]:
                if item is None or isinstance(item, Table):
                    for part in split_tables(pending):
                        if isinstance(part, Table):
                            blocks.append(Block("table", part.bbox, part.to_html()))
                        else:
                            blocks += column_blocks(rows_of(part), style)
                    pending = []
                    if item is not None:
                        blocks.append(Block("table", item.bbox, item.to_html()))
                else:
                    pending.append(item)
        headers = [b for b in furniture if b.type == "header"]
        footers = [b for b in furniture if b.type == "footer"]
        blocks = [replace(b, markdown=b.markdown.replace(SOFT_HYPHEN, "-"))
                  for b in headers + merge_blocks(blocks) + footers]
        return PageResult(page=page.number, blocks=blocks, engine=NAME)


def _headers_to_tables(regions: list[list]) -> list[list]:
    """A table's header row that reading order put at the end of the region above (its words bridge the
    column gaps that the body rows open) goes back to the top of the table's region."""
    for k in range(len(regions) - 1):
        above, below = regions[k], regions[k + 1]
        lines = [it for it in above if isinstance(it, TextLine)]
        if not lines or not below or not all(isinstance(it, TextLine) for it in below):
            continue
        last = max(lines, key=lambda ln: ln.bbox[3])
        top = min(it.bbox[1] for it in below)
        first_row = [it for it in below if it.bbox[1] < top + 0.5 * (it.bbox[3] - it.bbox[1])]
        em = max(last.size, 1.0)
        x0, x1 = min(it.bbox[0] for it in below), max(it.bbox[2] for it in below)
        if (len(first_row) >= 2 and 0 <= top - last.bbox[3] < 1.5 * em
                and last.bbox[0] >= x0 - em and last.bbox[2] <= x1 + em
                and sum(1 for ln in lines if ln.bbox[3] > last.bbox[1]) == 1 and not is_caption([last])):
            above.remove(last)
            below.insert(0, last)
    return [r for r in regions if r]

