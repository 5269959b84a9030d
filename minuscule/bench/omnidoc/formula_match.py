"""Display-formula matching (v1.6 MGAM, partial): pick the best of several candidate assignments.

Candidates implemented: the rows of the page's text quick-match, a formula-only quick-match and a
Hungarian assignment with "unmatched" slots, compared by the published total-cost key. The
published code also tries merge/DP, row-split and cases-normalised candidates; those are absent
here, so pages where one of them would win can score differently.
"""

from __future__ import annotations

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

from minuscule.bench.omnidoc.formula_lines import split_gt_formulas
from minuscule.bench.omnidoc.lines import Lines, ned_or_one
from minuscule.bench.omnidoc.match import quick_match

_RESCUED = ("text_formula", "image_formula", "formula_rescue", "table_formula_rescue")
_ALLOWED_PRED = ("", "equation_inline", "equation_isolated")


def formula_pool(pred: dict[str, list[dict]]) -> list[dict]:
    """Predicted display formulas plus formula-like text rescued from text, images and table cells."""
    pool, seen = [], set()
    for item, force in [(i, False) for i in pred.get("equation_isolated", [])] + \
                       [(i, True) for i in pred.get("formula_rescue", [])]:
        cand = dict(item)
        if force:
            cand["category_type"] = "equation_isolated"
            cand["fine_category_type"] = cand.get("fine_category_type") or "formula_rescue"
        key = _source_key(cand)
        if key not in seen:
            seen.add(key)
            pool.append(cand)
    return pool


def _range(item: dict) -> tuple:
    pos = item.get("position", [""])
    if isinstance(pos, list) and len(pos) >= 2:
        return pos[0], pos[1]
    start = pos[0] if pos else ""
    return start, start


def _source_key(item: dict) -> tuple:
    start, end = _range(item)
    return start, end, item.get("content", ""), item.get("fine_category_type", ""), item.get("category_type", "")


def _pred_kind(item: dict) -> str:
    kind = item.get("fine_category_type") or item.get("category_type") or "equation_isolated"
    return "equation_isolated" if kind in _RESCUED else kind


def _normalise_kinds(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        row = dict(row)
        if row.get("pred_category_type") in _RESCUED:
            row["pred_category_type"] = "equation_isolated"
        out.append(row)
    return out


def _complete(rows: list[dict], expected: int) -> bool:
    """Exactly one row per GT formula row, each with a formula (or no) prediction."""
    if expected <= 0:
        return True
    if not rows or len(rows) != expected:
        return False
    seen = set()
    for row in rows:
        g = row.get("gt_idx", [])
        if not isinstance(g, list) or len(g) != 1 or g[0] in ("", None) or g[0] in seen:
            return False
        seen.add(g[0])
        if row.get("pred_category_type", "") not in _ALLOWED_PRED:
            return False
    return len(seen) == expected


def _stats(rows: list[dict], pred_count: int) -> dict:
    rows = [r for r in rows if r.get("gt_idx") != [""]]
    if not rows:
        return {"weighted_edit": None, "avg_edit": None, "unmatched_hits": 0}
    dist = upper = 0
    for r in rows:
        if r.get("pred_idx") in ([""], ""):
            continue
        gt, pred = str(r.get("norm_gt", "") or ""), str(r.get("norm_pred", "") or "")
        upper += max(len(gt), len(pred))
        if max(len(gt), len(pred)):
            dist += Levenshtein.distance(gt, pred)
    return {"weighted_edit": dist / upper if upper else 0,
            "avg_edit": sum(float(r.get("edit", 1)) for r in rows) / len(rows),
            "unmatched_hits": sum(1 for r in rows if r.get("pred_idx") in ([""], ""))}


def _total_key(rows: list[dict], pool_sorted: list[dict], stats: dict) -> tuple:
    """Lexicographic cost: Σ edit, weighted edit, unused predictions, mean edit, unmatched GT."""
    total = sum(float(r.get("edit", 1)) for r in rows if r.get("gt_idx") != [""])
    used = set()
    for r in rows:
        if r.get("pred_idx") in ([""], ""):
            continue
        for k in r["pred_idx"]:
            # Row indices come from different item lists; like the published scorer, they are
            # read against the position-sorted pool regardless.
            if k in ("", None):
                continue
            try:
                used.add(pool_sorted[int(k)]["source_key"])
            except (TypeError, ValueError, IndexError):
                continue
    inf = float("inf")
    weighted = inf if stats["weighted_edit"] is None else float(stats["weighted_edit"])
    avg = inf if stats["avg_edit"] is None else float(stats["avg_edit"])
    return (total, weighted, max(0, len(pool_sorted) - len(used)), avg, 0, int(stats["unmatched_hits"]))


def _better(a: tuple, b: tuple) -> bool:
    for x, y in zip(a, b):
        if isinstance(x, float) or isinstance(y, float):
            if x + 1e-12 < y:
                return True
            if x > y + 1e-12:
                return False
        elif x != y:
            return x < y
    return False


def _hungarian_rows(gt_formulas: list[dict], pool_sorted: list[dict], img: str) -> list[dict]:
    lines = Lines(split_gt_formulas(gt_formulas), pool_sorted)
    n_gt, n_pred = len(lines.gt_norm), len(lines.pred_norm)

    def row(g: int, p: int | None) -> dict:
        item = lines.gt_items[g]
        position = item.get("order") if item.get("order") is not None else item.get("position", [""])[0]
        rec = {"gt_idx": [g], "gt": lines.gt_raw[g], "gt_position": [position], "norm_gt": lines.gt_norm[g],
               "gt_category_type": lines.gt_cat[g], "gt_attribute": [item.get("attribute", {})], "img_id": img}
        if p is None:
            return {**rec, "pred_idx": [""], "pred": "", "pred_position": "", "norm_pred": "",
                    "pred_category_type": "", "edit": 1}
        norm_pred = lines.pred_norm[p].strip()
        return {**rec, "pred_idx": [p], "pred": lines.pred_raw[p], "norm_pred": norm_pred,
                "pred_position": lines.pred_items[p]["position"][0],
                "pred_category_type": _pred_kind(lines.pred_items[p]), "edit": ned_or_one(lines.gt_norm[g], norm_pred)}

    if n_gt == 0:
        return []
    if n_pred == 0:
        return [row(g, None) for g in range(n_gt)]
    # Square matrix with dummy rows/columns so that any GT may stay unmatched at cost 1.
    cost = np.ones((n_gt + n_pred, n_gt + n_pred))
    cost[n_gt:, n_pred:] = 0.0
    for g in range(n_gt):
        for p in range(n_pred):
            cost[g, p] = ned_or_one(lines.gt_norm[g], lines.pred_norm[p])
    assigned = dict(zip(*linear_sum_assignment(cost)))
    return [row(g, int(assigned[g]) if assigned.get(g, n_pred) < n_pred else None) for g in range(n_gt)]


def match_display_formulas(gt_formulas: list[dict], pool: list[dict], current: list[dict], img: str) -> list[dict]:
    """Best complete candidate assignment of GT display-formula rows to predicted formulas."""
    pool = [dict(item, source_key=item.get("source_key", _source_key(item))) for item in pool]
    pool_sorted = sorted(pool, key=lambda it: (_range(it)[0], _pred_kind(it) == "equation_inline", _range(it)[1]))
    expected = len(Lines(split_gt_formulas(gt_formulas), pool_sorted).gt_norm)
    candidates = []
    current_rows = _normalise_kinds([r for r in current if r.get("gt_idx") != [""]])
    if _complete(current_rows, expected):
        candidates.append(current_rows)
    quick_rows = _normalise_kinds([r for r in quick_match(gt_formulas, pool, img, split_pred=False)
                                   if r.get("gt_idx") != [""]])
    if _complete(quick_rows, expected):
        candidates.append(quick_rows)
    hungarian = _normalise_kinds(_hungarian_rows(gt_formulas, pool_sorted, img))
    if _complete(hungarian, expected):
        candidates.append(hungarian)
    best, best_key = None, None
    for rows in candidates:
        key = _total_key(rows, pool_sorted, _stats(rows, len(pool_sorted)))
        if best is None or _better(key, best_key):
            best, best_key = rows, key
    return list(best) if best else []
