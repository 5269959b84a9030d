"""Candidate assignments of GT display-formula rows to predicted formulas (v1.6 MGAM building blocks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

from minuscule.bench.omnidoc.formula_lines import split_gt_formulas, split_pred_formulas
from minuscule.bench.omnidoc.lines import Lines, ned_or_one
from minuscule.bench.omnidoc.normalize import strip_formula_delimiters

RESCUED = ("text_formula", "image_formula", "formula_rescue", "table_formula_rescue")


def span(item: dict) -> tuple:
    pos = item.get("position", [""])
    if isinstance(pos, list) and len(pos) >= 2:
        return pos[0], pos[1]
    start = pos[0] if pos else ""
    return start, start


def pred_kind(item: dict) -> str:
    kind = item.get("fine_category_type") or item.get("category_type") or "equation_isolated"
    return "equation_isolated" if kind in RESCUED else kind


def position_sorted(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda it: (span(it)[0], pred_kind(it) == "equation_inline", span(it)[1]))


def merged_content(parts: list[str]) -> str:
    """Several formula rows as one `\\begin{array}{l} {r1} \\\\ {r2} \\end{array}`."""
    pieces = ["{" + s + "}" for s in (strip_formula_delimiters(str(p or "").strip()) for p in parts) if s]
    if not pieces:
        return ""
    if len(pieces) == 1:
        return pieces[0][1:-1]
    return "\\begin{array}{l} " + " \\\\ ".join(pieces) + " \\end{array}"


@dataclass
class Prepared:
    """GT rows and (sorted, optionally row-split) predictions of one page, as lines."""

    lines: Lines
    pred_raw_items: list[dict]   # position-sorted predictions before row splitting
    pred_items: list[dict]       # what the lines were built from

    @property
    def n_gt(self) -> int:
        return len(self.lines.gt_norm)

    @property
    def n_pred(self) -> int:
        return len(self.lines.pred_norm)


def prepare(gt_formulas: list[dict], preds: list[dict], split: bool = False) -> Prepared:
    raw = position_sorted(preds)
    items = split_pred_formulas(raw) if split else raw
    return Prepared(Lines(split_gt_formulas(gt_formulas), items), raw, items)


def row(p: Prepared, g: int, img: str, seq: list[int] | None = None) -> dict:
    """One formula record; `seq` are the (merged) prediction lines or None for a miss."""
    lines = p.lines
    item = lines.gt_items[g]
    position = item.get("order") if item.get("order") is not None else item.get("position", [""])[0]
    rec = {"gt_idx": [g], "gt": lines.gt_raw[g], "gt_position": [position], "norm_gt": lines.gt_norm[g],
           "gt_category_type": lines.gt_cat[g], "gt_attribute": [item.get("attribute", {})], "img_id": img}
    if not seq:
        return {**rec, "pred_idx": [""], "pred": "", "pred_position": "", "norm_pred": "",
                "pred_category_type": "", "edit": 1}
    parts = [lines.pred_raw[k] for k in seq]
    norm = " ".join(lines.pred_norm[k] for k in seq).strip()
    return {**rec, "pred_idx": list(seq), "pred": merged_content(parts) if len(seq) >= 2 else parts[0],
            "norm_pred": norm, "pred_position": lines.pred_items[seq[0]]["position"][0],
            "pred_category_type": "equation_isolated" if len(seq) >= 2 else pred_kind(lines.pred_items[seq[0]]),
            "edit": ned_or_one(lines.gt_norm[g], norm)}


def hungarian_rows(p: Prepared, img: str) -> list[dict]:
    """1:1 assignment with a free 'unmatched' option (cost 1) for every GT row."""
    n_gt, n_pred = p.n_gt, p.n_pred
    if n_gt == 0:
        return []
    if n_pred == 0:
        return [row(p, g, img) for g in range(n_gt)]
    cost = np.ones((n_gt + n_pred, n_gt + n_pred))
    cost[n_gt:, n_pred:] = 0.0
    for g in range(n_gt):
        for k in range(n_pred):
            cost[g, k] = ned_or_one(p.lines.gt_norm[g], p.lines.pred_norm[k])
    assigned = dict(zip(*linear_sum_assignment(cost)))
    return [row(p, g, img, [int(assigned[g])] if assigned.get(g, n_pred) < n_pred else None) for g in range(n_gt)]


# --- DP over ordered merges -------------------------------------------------------------------

def _max_merge(n_gt: int, n_pred: int) -> int:
    if n_pred <= 0:
        return 0
    if n_gt <= 1:
        return min(n_pred, 10)
    return min(n_pred, 12 if abs(n_gt - n_pred) >= 2 else 10)


def _sequences(n_pred: int, start: int, max_items: int, max_span: int, max_skips: int) -> list[tuple]:
    """Increasing index runs from `start` (depth-first order) with at most `max_skips` gaps in total."""
    if start >= n_pred:
        return []
    end = min(n_pred, start + max_span)
    out = []

    def dfs(seq: list[int], skips: int) -> None:
        out.append(tuple(seq))
        if len(seq) >= max_items:
            return
        for nxt in range(seq[-1] + 1, end):
            gap = nxt - seq[-1] - 1
            if gap <= skips:
                dfs(seq + [nxt], skips - gap)

    dfs([start], max_skips)
    return out


def _mergeable(p: Prepared, seq: tuple) -> bool:
    """Rows of one source formula always; otherwise only adjacent display formulas."""
    if len(seq) < 2:
        return True
    if len({p.pred_items[k].get("source_key") for k in seq}) == 1:
        return True
    if seq[-1] - seq[0] + 1 != len(seq):
        return False
    return all(pred_kind(p.pred_items[k]) == "equation_isolated" for k in seq)


_INF = (10 ** 9, 10 ** 9, 10 ** 9, 10 ** 9)


def _better_state(new: tuple, old: tuple) -> bool:
    """(Σ edit, Σ char edits, Σ lengths, inline hits): lower edit, then lower char ratio, then fewer inline."""
    if old == _INF or new[0] + 1e-12 < old[0]:
        return True
    if new[0] > old[0] + 1e-12:
        return False
    if new[2] > 0 and old[2] > 0:
        left, right = new[1] * old[2], old[1] * new[2]
        if left != right:
            return left < right
    elif new[2] > 0:
        return True
    elif old[2] > 0:
        return False
    return new[3] < old[3]


def dp_rows(p: Prepared, img: str, allow_gaps: bool) -> list[dict] | None:
    """Monotone alignment of GT rows to runs of predictions (merging allowed), or None."""
    n_gt, n_pred = p.n_gt, p.n_pred
    if n_gt <= 0 or n_pred <= 0:
        return None
    max_merge = _max_merge(n_gt, n_pred)
    max_span = min(n_pred, max_merge + 2) if allow_gaps else max_merge
    skips = 0
    if allow_gaps:
        # The published "rescued prediction" count is always 0 here (its kinds are mapped first).
        if abs(n_gt - n_pred) >= 1 or n_pred >= 4:
            skips = 1
        if abs(n_gt - n_pred) >= 3:
            skips = 2
    segments = {}
    for start in range(n_pred):
        segs = []
        for seq in _sequences(n_pred, start, max_merge, max_span, skips):
            kind = "equation_isolated" if len(seq) >= 2 else pred_kind(p.pred_items[seq[0]])
            segs.append((seq, " ".join(p.lines.pred_norm[k] for k in seq).strip(), kind))
        segments[start] = segs
    dp = [[_INF] * (n_pred + 1) for _ in range(n_gt + 1)]
    parent: list[list] = [[None] * (n_pred + 1) for _ in range(n_gt + 1)]
    dp[0][0] = (0.0, 0, 0, 0)
    for g in range(n_gt + 1):
        for k in range(n_pred + 1):
            state = dp[g][k]
            if state == _INF:
                continue
            skip = (state[0] + 1.0, state[1], state[2], state[3])
            if k < n_pred and _better_state(skip, dp[g][k + 1]):
                dp[g][k + 1], parent[g][k + 1] = skip, (g, k, None)
            if g >= n_gt:
                continue
            if _better_state(skip, dp[g + 1][k]):
                dp[g + 1][k], parent[g + 1][k] = skip, (g, k, "miss")
            if k >= n_pred:
                continue
            gt = p.lines.gt_norm[g]
            for seq, norm, kind in segments[k]:
                if not _mergeable(p, seq) or not norm:
                    continue
                upper = max(len(gt), len(norm))
                new = (state[0] + ned_or_one(gt, norm), state[1] + (Levenshtein.distance(gt, norm) if upper else 0),
                       state[2] + upper, state[3] + (kind == "equation_inline"))
                if _better_state(new, dp[g + 1][seq[-1] + 1]):
                    dp[g + 1][seq[-1] + 1], parent[g + 1][seq[-1] + 1] = new, (g, k, list(seq))
    if parent[n_gt][n_pred] is None:
        return None
    out, g, k = [], n_gt, n_pred
    while g > 0 or k > 0:
        prev = parent[g][k]
        if prev is None:
            return None
        pg, pk, action = prev
        if action == "miss":
            out.append(row(p, pg, img))
        elif action is not None:
            out.append(row(p, pg, img, action))
        g, k = pg, pk
    out.reverse()
    return out if len(out) == n_gt else None


# --- predictions with multi-row formulas partitioned into consecutive groups -------------------

def _wrap_display(content: str) -> str:
    s = str(content or "").strip()
    if not s:
        return ""
    if (s.startswith("$$") and s.endswith("$$")) or (s.startswith("\\[") and s.endswith("\\]")) or \
            (s.startswith("\\(") and s.endswith("\\)")):
        return s
    return f"\\[{s}\\]"


def _segment(items: list[dict]) -> dict:
    if len(items) == 1:
        return dict(items[0])
    merged = dict(items[0])
    merged["content"] = _wrap_display(merged_content([it.get("content", "") for it in items]))
    merged["position"] = [items[0].get("position", ["", ""])[0], items[-1].get("position", ["", ""])[1]]
    merged["fine_category_type"] = "equation_isolated"
    return merged


def partitioned_predictions(preds: list[dict], max_candidates: int = 128, max_rows: int = 8) -> list[list[dict]]:
    """Every way of regrouping the rows of each multi-row prediction (≤ 128 variants, else none)."""
    options, total, splittable = [], 1, False
    for item in position_sorted(preds):
        rows = split_pred_formulas([item])
        if len(rows) <= 1 or len(rows) > max_rows:
            options.append([[dict(item)]])
            continue
        splittable = True
        parts = []
        for mask in range(1 << (len(rows) - 1)):
            groups, start = [], 0
            for b in range(len(rows) - 1):
                if mask & (1 << b):
                    groups.append(rows[start:b + 1])
                    start = b + 1
            groups.append(rows[start:])
            parts.append([_segment(g) for g in groups])
        total *= max(1, len(parts))
        if total > max_candidates:
            return []
        options.append(parts)
    if not splittable:
        return []
    out: list[list[dict]] = []

    def walk(i: int, current: list[dict]) -> None:
        if i >= len(options):
            out.append([dict(it) for it in current])
            return
        for option in options[i]:
            current.extend(option)
            walk(i + 1, current)
            del current[-len(option):]

    walk(0, [])
    return out
