"""Score one page: GT elements, prediction split, matching, fallbacks, reading order."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein

from minuscule.bench.omnidoc.formula_lines import sort_preds
from minuscule.bench.omnidoc.formula_match import formula_pool, match_display_formulas
from minuscule.bench.omnidoc.lines import IGNORED_CATEGORIES, TEXT_CATEGORIES, ned_or_one
from minuscule.bench.omnidoc.match import match_tables, quick_match
from minuscule.bench.omnidoc.normalize import (normalized_text, strip_formula_delimiters,
                                               text_with_normalized_formulas, textblock_to_unicode)
from minuscule.bench.omnidoc.split import split_markdown

_FORMULA_KINDS = ("equation_isolated", "equation_inline")


@dataclass
class PageSamples:
    """What one page contributes to each metric (records in the published result-file form)."""

    text: list[dict] = field(default_factory=list)
    formula: list[dict] = field(default_factory=list)
    table: list[dict] = field(default_factory=list)
    reading_order: dict | None = None


def gt_elements(page: dict) -> dict[str, list[dict]]:
    """GT blocks by category; blocks chained by `truncated` relations become one block."""
    groups: list[set] = []
    in_chain: dict = {}
    for rel in page.get("extra", {}).get("relation", []):
        if rel.get("relation_type") != "truncated":
            continue
        pair = {rel["source_anno_id"], rel["target_anno_id"]}
        for anno in pair:
            in_chain[anno] = None
        rest = []
        for g in groups:
            if g & pair:
                pair |= g
            else:
                rest.append(g)
        groups = rest + [pair]
    out: dict[str, list[dict]] = defaultdict(list)
    for block in page["layout_dets"]:
        if block["anno_id"] in in_chain:
            in_chain[block["anno_id"]] = block
        elif not block.get("ignore", False):
            out[block["category_type"]].append(block)
    for g in groups:
        blocks = [in_chain[a] for a in g if in_chain.get(a)]
        if not blocks or any(b.get("ignore", False) for b in blocks):
            continue
        blocks.sort(key=lambda b: b["order"])
        out[blocks[0]["category_type"]].append({
            "category_type": blocks[0]["category_type"], "order": blocks[0]["order"],
            "anno_id": blocks[0]["anno_id"], "text": "".join(b["text"] for b in blocks), "merge_list": blocks})
    return out


def by_order(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda it: it.get("order") or 0)


def _is_formula(kind: str) -> bool:
    return kind in _FORMULA_KINDS


def _as_text(kind: str, text: str) -> str:
    """A block rendered as text for cross-category comparison (formula delimiters dropped)."""
    text = str(text or "")
    return textblock_to_unicode(strip_formula_delimiters(text) if _is_formula(kind) else text)


def _cross_category(rec: dict) -> dict:
    """Text GT matched to a formula prediction (or the reverse) is compared as plain text."""
    gt_kind, pred_kind = rec.get("gt_category_type", ""), rec.get("pred_category_type", "")
    if not gt_kind or not pred_kind or _is_formula(gt_kind) == _is_formula(pred_kind):
        return rec
    rec["gt"], rec["pred"] = _as_text(gt_kind, rec.get("gt", "")), _as_text(pred_kind, rec.get("pred", ""))
    rec["norm_gt"], rec["norm_pred"] = normalized_text(rec["gt"]), normalized_text(rec["pred"])
    rec["edit"] = ned_or_one(rec["norm_gt"], rec["norm_pred"])
    return rec


def _formula_hint(text: str) -> bool:
    text = str(text or "")
    if not text:
        return False
    if re.search(r"\$[^$]+\$|\\\([^)]*\\\)", text):
        return True
    if any(t in text for t in (r"\frac", r"\sum", r"\int", r"\sqrt", r"\left", r"\right")):
        return True
    return ("^" in text or "_" in text) and ("$" in text or "\\" in text)


def _owned(rec: dict, pool: list[dict]) -> list[int]:
    """Pool slots a record uses: its pred indices if they fit the pool, else by offset overlap."""
    idx = sorted({int(k) for k in rec.get("pred_idx", []) or [] if isinstance(k, int) and 0 <= k < len(pool)})
    if idx:
        return idx
    where = rec.get("pred_position")
    if where in ([""], "", None):
        return []
    out = []
    for k, slot in enumerate(pool):
        pos = slot["item"].get("position", ["", ""])
        try:
            if float(pos[0]) <= float(where) <= float(pos[1]):
                out.append(k)
        except (TypeError, ValueError, IndexError):
            continue
    return out


def _best_span(rec: dict, pool: list[dict], blocked: set[int]) -> dict | None:
    gt_text, gt_kind = str(rec.get("gt", "") or ""), rec.get("gt_category_type", "")
    hint = _formula_hint(gt_text)
    gt_norm = normalized_text(text_with_normalized_formulas(gt_text)) if hint and not _is_formula(gt_kind) \
        else normalized_text(_as_text(gt_kind, gt_text))
    if not gt_norm:
        return None
    current = float(rec.get("edit", 1))
    owned = _owned(rec, pool)
    lo, hi = (max(0, min(owned) - 8), min(len(pool) - 1, max(owned) + 8)) if owned else (0, len(pool) - 1)
    allowed = {"text_all", "equation_isolated"} if hint else {"text_all"}
    max_span, max_edit = (8, 0.45) if hint else (4, 0.35)
    best = None
    for start in range(lo, hi + 1):
        if pool[start]["kind"] not in allowed or start in blocked:
            continue
        raw, rendered = [], []
        for end in range(start, min(hi + 1, start + max_span)):
            if pool[end]["kind"] not in allowed or end in blocked:
                break
            raw.append(pool[end]["raw"])
            rendered.append(pool[end]["rendered"])
            norm = normalized_text("".join(rendered))
            if not norm:
                continue
            cand = {"pred_idx": list(range(start, end + 1)), "pred": "".join(raw),
                    "pred_position": pool[start]["item"]["position"][0], "pred_category_type": "text_block",
                    "norm_pred": norm, "edit": ned_or_one(gt_norm, norm), "span": end - start + 1,
                    "away": abs(start - owned[0]) if owned else 0}
            if best is None or cand["edit"] + 1e-12 < best["edit"]:
                best = cand
            elif cand["edit"] <= best["edit"] + 1e-12 and (
                    cand["span"] < best["span"] or (cand["span"] == best["span"] and cand["away"] < best["away"])):
                best = cand
    if not best or best["edit"] >= current - 0.2 or best["edit"] > max_edit:
        return None
    return best


def _local_span_fallback(records: list[dict], pred_mix: list[dict]) -> list[dict]:
    """A badly matched title/paragraph may take a better run of up to 4 (8 with math) nearby predictions."""
    pool = [{"kind": it["category_type"], "raw": str(it.get("content", "") or ""), "item": it,
             "rendered": _as_text(it["category_type"], str(it.get("content", "") or ""))}
            for _, it in sort_preds(pred_mix) if it["category_type"] in ("text_all", "equation_isolated")]
    if not records or not pool:
        return records
    records = [dict(r) for r in records]
    proposals = []
    for k, rec in enumerate(records):
        if rec.get("gt_idx") == [""] or rec.get("gt_category_type") not in ("title", "text_block"):
            continue
        if float(rec.get("edit", 1)) <= 0.45:
            continue
        if rec["gt_category_type"] == "text_block" and not (
                _formula_hint(rec.get("gt", "")) or len(str(rec.get("norm_gt", "") or "")) >= 80):
            continue
        blocked = set()
        for j, other in enumerate(records):
            if j != k and other.get("gt_idx") != [""]:
                blocked.update(_owned(other, pool))
        cand = _best_span(rec, pool, blocked)
        if cand:
            proposals.append((float(rec.get("edit", 1)) - cand["edit"], k, cand))
    used: set[int] = set()
    for _, k, cand in sorted(proposals, key=lambda x: x[0], reverse=True):
        if set(cand["pred_idx"]) & used:
            continue
        records[k].update({key: cand[key] for key in ("pred_idx", "pred", "pred_position", "pred_category_type",
                                                      "norm_pred", "edit")})
        used.update(cand["pred_idx"])
    return records


def reading_order(records: list[dict], img: str) -> dict | None:
    """GT orders of matched blocks listed in prediction order, against all GT orders sorted."""
    matched = [(r["gt_position"], r["pred_position"]) for r in records
               if r["gt_position"] != [""] and r["pred_position"] != ""]
    gt = sorted(x for r in records if r["gt_position"] != [""] for x in r["gt_position"] if x)
    pred = [x for pos, _ in sorted(matched, key=lambda m: m[1]) for x in pos if x]
    if not gt and not pred:
        return None
    return {"gt": gt, "pred": pred, "img_id": img, "edit": Levenshtein.distance(gt, pred) / max(len(gt), len(pred))}


def score_page(page: dict, markdown: str) -> PageSamples:
    img = page["page_info"]["image_path"].replace("\\", "/").split("/")[-1]
    pred = split_markdown(markdown)
    gt = gt_elements(page)
    pred_mix = [it for cat, items in pred.items()
                if cat not in ("html_table", "latex_table", "md2html_table", "formula_rescue") for it in items]
    gt_mix = by_order([it for cat in TEXT_CATEGORIES + ("equation_isolated",) for it in gt.get(cat, [])])

    tables = []
    if gt.get("table"):
        # LaTeX tables would need latexmlc to become HTML; without it they are empty and never match.
        tables = [r for r in match_tables(by_order(gt["table"]), list(pred.get("html_table", [])), img)
                  if r["gt_idx"] != [""]]

    records = [_cross_category(r) for r in quick_match(gt_mix, pred_mix, img)]
    records = _local_span_fallback(records, pred_mix)
    text = [r for r in records if r.get("gt_category_type") in TEXT_CATEGORIES]
    formulas = [r for r in records if r.get("gt_category_type") == "equation_isolated" and r["gt_idx"] != [""]]
    gt_formulas = by_order(gt.get("equation_isolated", []))
    pool = formula_pool(pred)
    if gt_formulas or pool:
        formulas = match_display_formulas(gt_formulas, pool, formulas, img)
    text = [r for r in text if r["gt_category_type"] not in IGNORED_CATEGORIES]
    order = reading_order(text + formulas + tables, img) if (text or formulas or tables) else None
    return PageSamples(text=text, formula=formulas, table=tables, reading_order=order)
