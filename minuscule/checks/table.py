"""table: a cell exists in some table with the given neighbours and headings."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process

from minuscule.checks.base import REQUIRED, BenchTest, CheckResult, need_str, register
from minuscule.markup.tables import Pos, TableGrid, all_tables
from minuscule.markup.text import normalize_text

RELATIONS = ("up", "down", "left", "right", "top_heading", "left_heading")


@dataclass(frozen=True, kw_only=True)
class TableTest(BenchTest):
    """Some cell whose text matches `cell` (full fuzzy ratio >= max(0.5, 1 - max_diffs/len)) must
    have, for every relation given, a cell in that relation matching the expected text.

    Tables are read from the raw page: pipe tables (unless ignore_markdown_tables) and HTML tables.
    Case-sensitive. Spans exist only in HTML tables.
    """

    cell: str
    up: str = ""
    down: str = ""
    left: str = ""
    right: str = ""
    top_heading: str = ""
    left_heading: str = ""
    ignore_markdown_tables: bool = False

    def run(self, markdown: str, renderer: Any = None) -> CheckResult:
        tables = all_tables(markdown, markdown=not self.ignore_markdown_tables)
        if not tables:
            return CheckResult(False, "no tables found")
        if any(t.overrun for t in tables):
            return CheckResult(False, "an HTML table has overlapping row/col spans the published parser rejects")
        threshold = _threshold(self.cell, self.max_diffs)
        wanted = [(name, getattr(self, name)) for name in RELATIONS if getattr(self, name)]
        reasons: list[str] = []
        for table in tables:
            texts = _normalized_cells(table)
            for pos in _matching_cells(self.cell, threshold, texts):
                misses = [m for name, expected in wanted if (m := self._miss(table, texts, pos, name, expected))]
                if not misses:
                    return CheckResult(True, "")
                reasons.extend(misses)
        if not reasons:
            return CheckResult(False, f"no cell matching {self.cell!r} (threshold {threshold:.3f}) in {len(tables)} table(s)")
        return CheckResult(False, f"cells matching {self.cell!r} found but not their neighbours: " + "; ".join(reasons[:4]))

    def _miss(self, table: TableGrid, texts: dict[Pos, str], pos: Pos, name: str, expected: str) -> str:
        if name == "top_heading":
            related = table.top_headings(pos)
        elif name == "left_heading":
            related = table.left_headings(pos)
        else:
            related = table.related(name, pos)
        need = _threshold(expected, self.max_diffs)
        best, best_text = 0.0, None
        for other in related:
            score = fuzz.ratio(expected, texts[other]) / 100.0
            if score >= need:
                return ""
            if score > best:
                best, best_text = score, texts[other]
        if best_text is None:
            return f"no {name} cell, expected {expected!r}" if not related else f"{name} expected {expected!r} (best 0.00)"
        return f"{name} is {best_text!r}, expected {expected!r} (best {best:.2f})"


def _threshold(text: str, max_diffs: int) -> float:
    return max(0.5, 1.0 - max_diffs / (len(text) or 1))


def _matching_cells(query: str, threshold: float, texts: dict[Pos, str]) -> list[Pos]:
    """Cells whose fuzz.ratio with `query` reaches `threshold`, in table order. rapidfuzz scores
    the whole table in C, with a cutoff a hair below the threshold; the exact test is redone on
    the few survivors, so the verdict is that of comparing every cell."""
    values = list(texts.values())
    hits = process.extract(query, values, scorer=fuzz.ratio, score_cutoff=max(0.0, 100.0 * threshold - 1e-6), limit=None)
    keys = list(texts)
    return [keys[i] for i in sorted(i for _, _, i in hits) if fuzz.ratio(query, values[i]) / 100.0 >= threshold]


_NORMALIZED: dict[int, tuple[TableGrid, dict[Pos, str]]] = {}


# Outputs for one page (a GRPO group, a corruption study) share most cell texts with each other.
_normalize_cell = lru_cache(maxsize=1 << 16)(normalize_text)


def _normalized_cells(table: TableGrid) -> dict[Pos, str]:
    """Normalised cell texts, memoised per table object (tables are cached per page text)."""
    hit = _NORMALIZED.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    if len(_NORMALIZED) > 512:
        _NORMALIZED.clear()
    texts = {pos: _normalize_cell(text) for pos, text in table.cells.items()}
    _NORMALIZED[id(table)] = (table, texts)
    return texts


@register(
    ("table",),
    {"cell": REQUIRED, **{name: "" for name in RELATIONS}, "ignore_markdown_tables": False},
)
def _build_table(values: dict[str, Any], common: dict[str, Any]) -> TableTest:
    # A null relation means "not asked", like an empty one.
    texts = {name: normalize_text(need_str(values, name)) if values[name] is not None else "" for name in RELATIONS}
    texts["cell"] = normalize_text(need_str(values, "cell"))
    return TableTest(**common, **texts, ignore_markdown_tables=bool(values["ignore_markdown_tables"]))
