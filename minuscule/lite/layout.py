"""Reading order by a recursive XY-cut that prefers column gutters, so columns are read one after another."""

from __future__ import annotations

import statistics
from typing import Generic, Protocol, TypeVar


class Boxed(Protocol):
    bbox: tuple[float, float, float, float]


T = TypeVar("T", bound=Boxed)


class ReadingOrder(Generic[T]):
    """Splits items into single-column regions in reading order.

    A vertical cut needs a gutter (a vertical strip no item crosses) with items on both sides that look
    like text columns, not narrow table cells. Without one, the region is cut into horizontal bands and
    consecutive bands that share a gutter are regrouped, so that two columns whose paragraph gaps happen
    to line up are still read column by column.
    """

    def __init__(self, items: list[T], gutter: float | None = None):
        self.items = items
        sizes = [it.bbox[3] - it.bbox[1] for it in items if it.bbox[3] > it.bbox[1]]
        self.gutter = gutter if gutter is not None else max(6.0, 0.6 * statistics.median(sizes) if sizes else 6.0)
        # Column-likeness is judged against the whole text area, not the region being cut: inside a
        # table every cell is wide relative to the table.
        self.width = (max(it.bbox[2] for it in items) - min(it.bbox[0] for it in items)) if items else 1.0

    def regions(self) -> list[list[T]]:
        return self._cut(list(self.items))

    def _cut(self, items: list[T]) -> list[list[T]]:
        if len(items) <= 1:
            return [items] if items else []
        x = self._vertical_cut(items)
        if x is not None:
            left = [it for it in items if it.bbox[2] <= x]
            right = [it for it in items if it.bbox[2] > x]
            return self._cut(left) + self._cut(right)
        groups = self._band_groups(items)
        if len(groups) <= 1:
            return [sorted(items, key=lambda it: (it.bbox[1], it.bbox[0]))]
        out: list[list[T]] = []
        for g in groups:
            out += self._cut(g)
        return out

    def _free(self, items: list[T], lo: float, hi: float) -> list[tuple[float, float]]:
        """Strips of [lo, hi] that no item covers, at least a gutter wide."""
        spans = sorted((max(lo, it.bbox[0]), min(hi, it.bbox[2])) for it in items)
        free, edge = [], lo
        for a, b in spans:
            if a - edge >= self.gutter:
                free.append((edge, a))
            edge = max(edge, b)
        if hi - edge >= self.gutter:
            free.append((edge, hi))
        return free

    def _vertical_cut(self, items: list[T]) -> float | None:
        lo = min(it.bbox[0] for it in items)
        hi = max(it.bbox[2] for it in items)
        width = self.width
        best = None
        for a, b in self._free(items, lo, hi):
            left = [it for it in items if it.bbox[2] <= a]
            right = [it for it in items if it.bbox[0] >= b]
            if not left or not right or not (self._column_like(left, width) and self._column_like(right, width)):
                continue
            if best is None or b - a > best[1] - best[0]:
                best = (a, b)
        return None if best is None else (best[0] + best[1]) / 2

    @staticmethod
    def _column_like(side: list[T], width: float) -> bool:
        # Text columns are made of lines that fill much of the column; table cells are narrow scraps.
        wide = sum(1 for it in side if it.bbox[2] - it.bbox[0] >= 0.18 * width)
        return wide >= 3 or wide * 3 >= len(side) or (len(side) == 1 and side[0].bbox[2] - side[0].bbox[0] >= 0.1 * width)

    def _band_groups(self, items: list[T]) -> list[list[T]]:
        lo = min(it.bbox[0] for it in items)
        hi = max(it.bbox[2] for it in items)
        bands: list[list[T]] = []
        bottom = 0.0
        for it in sorted(items, key=lambda it: it.bbox[1]):
            if bands and it.bbox[1] < bottom:
                bands[-1].append(it)
                bottom = max(bottom, it.bbox[3])
            else:
                bands.append([it])
                bottom = it.bbox[3]
        # Each group: its bands and its gutters (None for single-column text).
        groups: list[tuple[list[list[T]], list[tuple[float, float]] | None]] = []
        for band in bands:
            free = self._free(band, lo, hi)
            inner = [(a, b) for a, b in free if a > lo and b < hi]
            if groups and groups[-1][1]:
                joint = _intersect(groups[-1][1], free)
                if joint:
                    groups[-1][0].append(band)
                    groups[-1] = (groups[-1][0], joint)
                    continue
            if inner:
                groups.append(([band], inner))
            elif groups and groups[-1][1] is None:
                groups[-1][0].append(band)
            else:
                groups.append(([band], None))
        # A band with items right of the gutter only (a right column that starts higher than the left
        # one) belongs to the column group below it. Left-only bands are read first either way.
        for k in range(1, len(groups)):
            prev, gutters = groups[k - 1][0], groups[k][1]
            if groups[k - 1][1] is not None or not gutters:
                continue
            start = min(a for a, _ in gutters)
            while prev and all(it.bbox[0] >= start for it in prev[-1]) and _intersect(gutters, self._free(prev[-1], lo, hi)):
                groups[k][0].insert(0, prev.pop())
        return [[it for band in g for it in band] for g, _ in groups if g]


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi > lo:
                out.append((lo, hi))
    return out
