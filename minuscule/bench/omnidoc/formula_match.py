"""Display-formula matching (v1.6 MGAM): the best of many candidate assignments for the page.

GT formula rows stay fixed; the candidates differ on the prediction side: the text quick-match's
own rows, a formula-only quick-match, a Hungarian assignment, order-preserving merges (DP, with
and without gaps), every regrouping of multi-row predictions, row-split predictions, and all of
these again after rewriting `cases` logic braces. The lowest published total-cost key wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from minuscule.bench.omnidoc.formula_candidates import (RESCUED, Prepared, dp_rows, hungarian_rows,
                                                        partitioned_predictions, prepare, span)
from minuscule.bench.omnidoc.formula_lines import logic_brace_formula
from minuscule.bench.omnidoc.match import quick_match

_ALLOWED_PRED = ("", "equation_inline", "equation_isolated")


@dataclass
class Candidate:
    name: str
    rows: list[dict]
    pred_items: list[dict]    # the list the rows' pred_idx are read against when counting unused predictions
    raw_pred_count: int
    logic_rewrites: int = 0


def formula_pool(pred: dict[str, list[dict]]) -> list[dict]:
    """Predicted display formulas plus formula-like text rescued from text, images and table cells."""
    pool, seen = [], set()
    for item, force in [(i, False) for i in pred.get("equation_isolated", [])] + \
                       [(i, True) for i in pred.get("formula_rescue", [])]:
        cand = dict(item)
        if force:
            cand["category_type"] = "equation_isolated"
            cand["fine_category_type"] = cand.get("fine_category_type") or "formula_rescue"
        key = source_key(cand)
        if key not in seen:
            seen.add(key)
            pool.append(cand)
    return pool


def source_key(item: dict) -> tuple:
    start, end = span(item)
    return start, end, item.get("content", ""), item.get("fine_category_type", ""), item.get("category_type", "")


def _with_keys(items: list[dict]) -> list[dict]:
    """Copies tagged with their source formula; rows split or merged later keep the tag."""
    return [dict(it, source_key=it.get("source_key", source_key(it))) for it in items]


def _kinds(rows: list[dict]) -> list[dict]:
    return [dict(r, pred_category_type="equation_isolated") if r.get("pred_category_type") in RESCUED else dict(r)
            for r in rows]


def _complete(rows: list[dict] | None, expected: int) -> bool:
    """Exactly one row per GT formula row, each with a formula (or no) prediction."""
    if expected <= 0:
        return True
    if not rows or len(rows) != expected:
        return False
    seen = set()
    for r in rows:
        g = r.get("gt_idx", [])
        if not isinstance(g, list) or len(g) != 1 or g[0] in ("", None) or g[0] in seen:
            return False
        seen.add(g[0])
        if r.get("pred_category_type", "") not in _ALLOWED_PRED:
            return False
    return len(seen) == expected


def _key(c: Candidate) -> tuple:
    """Σ edit, weighted char edit, unused source formulas, mean edit, −rewrites, unmatched GT rows."""
    rows = [r for r in c.rows if r.get("gt_idx") != [""]]
    dist = upper = 0
    for r in rows:
        if r.get("pred_idx") in ([""], ""):
            continue
        gt, pred = str(r.get("norm_gt", "") or ""), str(r.get("norm_pred", "") or "")
        upper += max(len(gt), len(pred))
        if max(len(gt), len(pred)):
            dist += Levenshtein.distance(gt, pred)
    used = set()
    for r in c.rows:
        if r.get("pred_idx") in ([""], ""):
            continue
        for k in r["pred_idx"]:
            # Row indices come from different item lists; as published, they are read against
            # the candidate's own prediction list regardless.
            try:
                used.add(c.pred_items[int(k)].get("source_key"))
            except (TypeError, ValueError, IndexError):
                continue
    used.discard(None)
    inf = float("inf")
    total = sum(float(r.get("edit", 1)) for r in rows)
    weighted = (dist / upper if upper else 0.0) if rows else inf
    mean = sum(float(r.get("edit", 1)) for r in rows) / len(rows) if rows else inf
    unmatched = sum(1 for r in rows if r.get("pred_idx") in ([""], ""))
    return total, float(weighted), max(0, c.raw_pred_count - len(used)), mean, -c.logic_rewrites, unmatched


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


def _split_candidates(gt_formulas: list[dict], preds: list[dict], img: str, prefix: str = "") -> list[Candidate]:
    out, seen = [], set()
    for variant in partitioned_predictions(preds):
        p = prepare(gt_formulas, variant)
        rows = hungarian_rows(p, img)
        if not rows:
            continue
        key = tuple((tuple(r.get("gt_position") or []), tuple(r.get("pred_idx") or []), round(float(r["edit"]), 6))
                    for r in rows)
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(prefix + "split_hungarian", _kinds(rows), p.pred_raw_items, len(preds)))
    p = prepare(gt_formulas, preds, split=True)
    if len(p.pred_items) > len(p.pred_raw_items):
        for name, gaps in (("split_dp", False), ("split_dp_allow_gaps", True)):
            rows = dp_rows(p, img, gaps)
            if rows:
                out.append(Candidate(prefix + name, _kinds(rows), p.pred_items, len(p.pred_raw_items)))
    return out


def _unsplit_candidates(gt_formulas: list[dict], preds: list[dict], img: str, p: Prepared,
                        prefix: str = "") -> list[Candidate]:
    raw = p.pred_raw_items
    out = []
    quick = _kinds([r for r in quick_match(gt_formulas, preds, img, split_pred=False) if r.get("gt_idx") != [""]])
    if _complete(quick, p.n_gt):
        out.append(Candidate(prefix + "quick_unsplit", quick, raw, len(raw)))
    hungarian = hungarian_rows(p, img)
    if _complete(hungarian, p.n_gt):
        out.append(Candidate(prefix + "hungarian_unsplit", _kinds(hungarian), raw, len(raw)))
    for name, gaps in (("dp_unsplit", False), ("dp_unsplit_allow_gaps", True)):
        rows = dp_rows(p, img, gaps)
        if _complete(rows, p.n_gt):
            out.append(Candidate(prefix + name, _kinds(rows), raw, len(raw)))
    return out


def match_display_formulas(gt_formulas: list[dict], pool: list[dict], current: list[dict], img: str) -> list[dict]:
    """Best candidate rows (one per GT formula row) for the page, or [] when there is no GT formula."""
    pool = _with_keys(pool)
    p = prepare(gt_formulas, pool)
    if p.n_gt == 0:  # every candidate is empty then
        return []
    candidates = []
    current_rows = _kinds([r for r in current if r.get("gt_idx") != [""]])
    if _complete(current_rows, p.n_gt):
        candidates.append(Candidate("current_match", current_rows, p.pred_raw_items, len(p.pred_raw_items)))
    candidates += _unsplit_candidates(gt_formulas, pool, img, p)
    candidates += _split_candidates(gt_formulas, pool, img)
    rewritten, count = [], 0
    for item in pool:
        item = dict(item)
        if item.get("category_type") == "equation_isolated":
            new = logic_brace_formula(str(item.get("content", "")))
            if new != str(item.get("content", "")):
                item["content"], count = new, count + 1
        rewritten.append(item)
    if count:
        p2 = prepare(gt_formulas, rewritten)
        extra = _unsplit_candidates(gt_formulas, rewritten, img, p2, "logic_norm_")
        extra += _split_candidates(gt_formulas, rewritten, img, "logic_norm_")
        for c in extra:
            c.logic_rewrites = count
        candidates += extra
    best, best_key = None, None
    for c in candidates:
        key = _key(c)
        if best is None or _better(key, best_key):
            best, best_key = c, key
    return list(best.rows) if best else []
