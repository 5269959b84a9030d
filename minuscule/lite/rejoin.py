"""Rejoins a line that a wide word gap split in two (justified headings), unless the gap is a column or cell gap."""

from __future__ import annotations

import bisect
from dataclasses import replace

from minuscule.documents.types import TextLine

# A justified heading line stretches its word gaps to ~2 em; column gutters are narrower than that in
# most layouts, so the gap width alone cannot tell them apart. What tells them apart is alignment.
MAX_GAP_EM = 3.0
# A justified line of two or three words stretches further; it is still joined when the two pieces
# together span exactly what another line of the same column spans.
MAX_JUSTIFIED_GAP_EM = 8.0
ALIGN_EM = 0.4
# Only lines this near (above or below) can anchor a piece: a table's column far up the page says
# nothing about a heading's word gap.
NEAR_EM = 6.0


def rejoin_lines(lines: list[TextLine], size_tol: float = 0.2) -> list[TextLine]:
    """Lines in, lines out; two pieces on one baseline are joined when the right one is not anchored.

    A piece right of a gap belongs to a column (of text or of a table) when some other piece lines up
    with it: the same left edge or centre, or the same right edge while also starting right of the
    gap. A stretched word gap in a heading has nothing lined up beyond it. Pieces whose sizes differ by
    more than `size_tol` (relative) are not joined: text-layer sizes are exact, OCR box heights are not.
    """
    if len(lines) < 2:
        return lines
    order = sorted(range(len(lines)), key=lambda i: (lines[i].bbox[1], lines[i].bbox[0]))
    out = list(lines)
    alive = [True] * len(lines)
    beside = _beside(lines, order)
    tops = [lines[i].bbox[1] for i in order]
    tallest = max(ln.bbox[3] - ln.bbox[1] for ln in lines)
    for i in order:
        if not alive[i]:
            continue
        while True:
            j = _right_neighbour(out, alive, i, size_tol, beside[i])
            if j is None or _anchored(out, alive, i, j, _near(order, tops, out[j], tallest)):
                break
            out[i] = _join(out[i], out[j])
            alive[j] = False
            beside[i] = beside[i] | beside[j]
    return [ln for ln, a in zip(out, alive) if a]


def _beside(lines: list[TextLine], order: list[int]) -> list[set[int]]:
    """For each line, the lines on its row (a sweep down the page: only lines that start above a line's
    bottom can share its row)."""
    out: list[set[int]] = [set() for _ in lines]
    for k, i in enumerate(order):
        a = lines[i]
        for j in order[k + 1:]:
            b = lines[j]
            if b.bbox[1] >= a.bbox[3]:
                break
            if _same_row(a, b):
                out[i].add(j)
                out[j].add(i)
    return out


def _near(order: list[int], tops: list[float], b: TextLine, tallest: float) -> list[int]:
    """Lines that start within NEAR_EM of b, above or below (by top edge, allowing for the tallest line)."""
    reach = NEAR_EM * _em(b)
    lo = bisect.bisect_left(tops, b.bbox[1] - reach - tallest)
    hi = bisect.bisect_right(tops, b.bbox[3] + reach)
    return order[lo:hi]


def _em(line: TextLine) -> float:
    return max(line.size, 1.0)


def _same_row(a: TextLine, b: TextLine) -> bool:
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    return overlap >= 0.6 * min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])


def _right_neighbour(lines: list[TextLine], alive: list[bool], i: int, size_tol: float, row: set[int]) -> int | None:
    a = lines[i]
    best = None
    for j in row:
        b = lines[j]
        if j == i or not alive[j] or not _same_row(a, b) or b.bbox[0] < a.bbox[2]:
            continue
        if best is None or b.bbox[0] < lines[best].bbox[0]:
            best = j
    if best is None:
        return None
    b = lines[best]
    em = max(_em(a), _em(b))
    if abs(_em(a) - _em(b)) > size_tol * em or a.bold != b.bold or a.mono or b.mono:
        return None
    gap = b.bbox[0] - a.bbox[2]
    if gap <= MAX_GAP_EM * em or (gap <= MAX_JUSTIFIED_GAP_EM * em and _spans_a_line(lines, alive, a, b)):
        return best
    return None


def _spans_a_line(lines: list[TextLine], alive: list[bool], a: TextLine, b: TextLine) -> bool:
    tol = ALIGN_EM * max(_em(a), _em(b))
    return any(alive[k] and not _same_row(c, a) and abs(c.bbox[0] - a.bbox[0]) <= tol and abs(c.bbox[2] - b.bbox[2]) <= tol
               for k, c in enumerate(lines))


def _anchored(lines: list[TextLine], alive: list[bool], i: int, j: int, near: list[int]) -> bool:
    a, b = lines[i], lines[j]
    tol = ALIGN_EM * max(_em(a), _em(b))
    centre = (b.bbox[0] + b.bbox[2]) / 2
    reach = NEAR_EM * max(_em(a), _em(b))
    for k in near:
        c = lines[k]
        if k in (i, j) or not alive[k] or _same_row(c, b) or c.bbox[1] > b.bbox[3] + reach or c.bbox[3] < b.bbox[1] - reach:
            continue
        if abs(c.bbox[0] - b.bbox[0]) <= tol or abs((c.bbox[0] + c.bbox[2]) / 2 - centre) <= tol:
            return True
        if abs(c.bbox[2] - b.bbox[2]) <= tol and c.bbox[0] > a.bbox[2]:
            return True
    return False


def _join(a: TextLine, b: TextLine) -> TextLine:
    first = replace(b.chars[0], space_before=True) if b.chars else None
    chars = a.chars + ((first,) + b.chars[1:] if first is not None else ())
    box = (min(a.bbox[0], b.bbox[0]), min(a.bbox[1], b.bbox[1]), max(a.bbox[2], b.bbox[2]), max(a.bbox[3], b.bbox[3]))
    return replace(a, text=f"{a.text} {b.text}", bbox=box, score=min(a.score, b.score), chars=chars,
                   math=a.math and b.math)
