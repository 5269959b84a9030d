"""Shared matching helpers: item → (raw, normalised) lines, edit-distance matrices, match records."""

from __future__ import annotations

import numpy as np
from rapidfuzz.distance import Levenshtein

from minuscule.bench.omnidoc.normalize import normalized_formula, normalized_html_table, normalized_text

TEXT_CATEGORIES = ("text_block", "title", "code_txt", "code_txt_caption", "reference", "equation_caption",
                   "figure_caption", "figure_footnote", "table_caption", "table_footnote", "code_algorithm",
                   "code_algorithm_caption", "header", "footer", "page_footnote", "page_number")
# GT categories matched first and then left out of the text score (neither rewarded nor penalised).
IGNORED_CATEGORIES = ("figure_caption", "figure_footnote", "table_caption", "table_footnote", "code_algorithm",
                      "code_algorithm_caption", "header", "footer", "page_footnote", "page_number",
                      "equation_caption")


def ned(a, b) -> float:
    """Normalised edit distance; 0 for two empty inputs."""
    if not a and not b:
        return 0.0
    return Levenshtein.distance(a, b) / max(len(a), len(b))


def ned_or_one(a, b) -> float:
    """Normalised edit distance where one empty side counts as a full miss."""
    if not a and not b:
        return 0
    if not a or not b:
        return 1
    return Levenshtein.distance(a, b) / max(len(a), len(b))


def edit_matrix(rows: list[str], cols: list[str]) -> np.ndarray:
    out = np.zeros((len(rows), len(cols)))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            out[i, j] = ned(r, c)
    return out


def category(item: dict) -> str:
    return item.get("fine_category_type") or item["category_type"]


def gt_position(item: dict):
    """The GT reading-order key: `order` when truthy, else the start offset (as published)."""
    return item.get("order") if item.get("order") else item.get("position", [""])[0]


class Lines:
    """Raw and normalised strings of GT and prediction items, empty ones dropped.

    Like the published scorer, the dropped entries are *not* removed from `gt_items` /
    `pred_items`, so index k of the lines and index k of the items can refer to different
    elements once something was dropped; positions and orders are looked up by that index.
    """

    def __init__(self, gt_items: list[dict], pred_items: list[dict], tables: bool = False):
        self.gt_items, self.pred_items = gt_items, pred_items
        gt: list[tuple[str, str, str]] = []
        preds: list[tuple[str, str]] = []
        if tables:
            for item in gt_items:
                raw = str(item.get("content") or item.get("html", ""))
                gt.append((raw, _table_norm(raw), category(item)))
            for item in pred_items:
                raw = str(item["content"])
                preds.append((raw, _table_norm(raw)))
        else:
            for item in pred_items:
                raw = str(item["content"])
                if item["category_type"] == "text_all":
                    preds.append((raw, normalized_text(raw)))
                elif item["category_type"] == "equation_isolated":
                    preds.append((raw, normalized_formula(raw)))
                else:
                    preds.append((raw, raw))
            for item in gt_items:
                if item.get("content"):
                    raw = str(item["content"])
                    norm = normalized_text(raw) if item["category_type"] == "text_all" else item["content"]
                    gt.append((raw, norm, category(item)))
                elif item["category_type"] in TEXT_CATEGORIES:
                    raw = str(item["text"])
                    gt.append((raw, normalized_text(raw), category(item)))
                elif item["category_type"] == "equation_isolated":
                    raw = str(item["latex"])
                    gt.append((raw, normalized_formula(raw), category(item)))
        gt = [g for g in gt if g[0] and g[1]]
        preds = [p for p in preds if p[0] and p[1]]
        self.gt_raw = [g[0] for g in gt]
        self.gt_norm = [g[1] for g in gt]
        self.gt_cat = [g[2] for g in gt]
        self.pred_raw = [p[0] for p in preds]
        self.pred_norm = [p[1] for p in preds]

    def pred_category(self, k: int) -> str:
        return category(self.pred_items[k])


def _table_norm(text: str) -> str:
    return normalized_html_table(text) if "<table" in text.lower() else text
