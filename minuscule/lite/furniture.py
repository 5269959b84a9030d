"""Running headers, footers and page numbers: lines in the page margins that repeat across pages."""

from __future__ import annotations

import re
from collections import Counter

from minuscule.documents.types import TextLine

MARGIN = 0.09  # share of the page height at the top and bottom searched for furniture
_PAGE_NUMBER = re.compile(r"^(page\s+)?(\d{1,4}|[ivxlcdm]{1,7})(\s*(/|of)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$",
                          re.IGNORECASE)


def _key(text: str) -> str:
    # Page numbers and dates change from page to page; the rest of a running line does not.
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _zone(line: TextLine, height: float) -> str | None:
    cy = (line.bbox[1] + line.bbox[3]) / 2
    if cy < MARGIN * height:
        return "header"
    if cy > (1 - MARGIN) * height:
        return "footer"
    return None


def find_furniture(pages: list[tuple[list[TextLine], float]]) -> list[dict[int, str]]:
    """For each page (its lines and height), the indices of furniture lines → "header" or "footer".

    A margin line is furniture when it is a page number, or when its text (digits ignored) recurs in the
    same margin on at least half of the pages (and on two or more).
    """
    counts: Counter[tuple[str, str]] = Counter()
    for lines, height in pages:
        seen = set()
        for ln in lines:
            zone = _zone(ln, height)
            if zone:
                seen.add((zone, _key(ln.text)))
        counts.update(seen)
    need = max(2, (len(pages) + 1) // 2)
    out = []
    for lines, height in pages:
        marks = {}
        for i, ln in enumerate(lines):
            zone = _zone(ln, height)
            if not zone:
                continue
            if _PAGE_NUMBER.match(ln.text.strip()) or counts[(zone, _key(ln.text))] >= need:
                marks[i] = zone
        out.append(marks)
    return out
