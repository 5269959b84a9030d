"""Edit distance, TEDS and reading-order scores aggregated per page and over pages (v1.6 rules)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from minuscule.bench.omnidoc.normalize import normalized_html_table
from minuscule.bench.omnidoc.teds import teds


@dataclass(frozen=True)
class EditSummary:
    """`page_avg` is the leaderboard number: mean over pages of Σdistance/Σmax-length."""

    page_avg: float | None
    whole: float | None
    sample_avg: float | None
    per_page: dict[str, float]
    samples: int


def _strings(sample: dict) -> tuple:
    """The strings a sample is scored on: normalised ones when non-empty, else the raw ones."""
    gt = sample["norm_gt"] if sample.get("norm_gt") else sample["gt"]
    pred = sample["norm_pred"] if sample.get("norm_pred") else sample["pred"]
    return gt, pred


def edit_distance(samples: list[dict]) -> EditSummary:
    """Adds `Edit_num`, `upper_len` and `metric.Edit_dist` to each sample (both-empty samples score nothing)."""
    num, upper = defaultdict(float), defaultdict(int)
    ratios = []
    for s in samples:
        gt, pred = _strings(s)
        s["upper_len"] = max(len(gt), len(pred))
        img = s["img_id"]
        upper[img] += s["upper_len"]
        if gt or pred:
            d = Levenshtein.distance(pred, gt)
            s["Edit_num"] = d
            s.setdefault("metric", {})["Edit_dist"] = d / s["upper_len"]
            num[img] += d
            ratios.append(d / s["upper_len"])
        else:
            num[img] += 0
    per_page = {img: num[img] / upper[img] for img in sorted(upper) if upper[img] > 0}
    total_upper = sum(upper.values())
    return EditSummary(
        page_avg=sum(per_page.values()) / len(per_page) if per_page else None,
        whole=sum(num.values()) / total_upper if total_upper else None,
        sample_avg=sum(ratios) / len(ratios) if ratios else None,
        per_page=per_page, samples=len(samples))


@dataclass(frozen=True)
class TableSummary:
    teds: float | None            # mean over all table samples
    teds_s: float | None
    page_teds: float | None       # leaderboard: mean over pages of the page mean (0 for pages with no sample)
    page_teds_s: float | None
    per_page_teds: dict[str, float]
    per_page_teds_s: dict[str, float]
    per_table: dict[str, dict[str, float]]


def table_scores(samples: list[dict], gt_table_pages: set[str]) -> TableSummary:
    """TEDS/TEDS-S per table on normalised HTML, then page means (pages with GT tables all count)."""
    from lxml import etree

    by_page: dict[str, list[tuple[float, float]]] = defaultdict(list)
    per_table = {}
    for s in samples:
        s["norm_gt"] = normalized_html_table(s["gt"])
        s["norm_pred"] = normalized_html_table(s["pred"])
        gt, pred = _strings(s)
        try:
            score, score_s = teds(pred, gt), teds(pred, gt, structure_only=True)
        except (ValueError, TypeError, LookupError, etree.LxmlError) as exc:
            # Malformed spans (`colspan="$2$"`) or unparsable markup: the published scorer gives both 0.
            score = score_s = 0.0
            s["teds_error"] = f"{type(exc).__name__}: {exc}"
        s.setdefault("metric", {}).update({"TEDS": score, "TEDS_structure_only": score_s})
        by_page[s["img_id"]].append((score, score_s))
        per_table[f"{s['img_id']}_{s['gt_idx']}"] = {"TEDS": score, "TEDS_structure_only": score_s}
    for img in gt_table_pages:
        by_page.setdefault(img, [(0.0, 0.0)])
    page_means = {img: (sum(a for a, _ in v) / len(v), sum(b for _, b in v) / len(v)) for img, v in by_page.items()}
    scored = [(s["metric"]["TEDS"], s["metric"]["TEDS_structure_only"]) for s in samples]
    return TableSummary(
        teds=sum(a for a, _ in scored) / len(scored) if scored else None,
        teds_s=sum(b for _, b in scored) / len(scored) if scored else None,
        page_teds=sum(a for a, _ in page_means.values()) / len(page_means) if page_means else None,
        page_teds_s=sum(b for _, b in page_means.values()) / len(page_means) if page_means else None,
        per_page_teds={img: page_means[img][0] for img in sorted(page_means)},
        per_page_teds_s={img: page_means[img][1] for img in sorted(page_means)},
        per_table=per_table)


def finite(x: float | None) -> float | None:
    """JSON-safe number: NaN/inf/None → None."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(x)


def page_labels(attributes: dict) -> list[str]:
    """Page attribute labels as published: 'key: value', and each special issue except table ones."""
    labels = []
    for key, value in (attributes or {}).items():
        if isinstance(value, list):
            labels += [issue for issue in value if "table" not in issue]
        else:
            labels.append(f"{key}: {value}")
    return labels


def by_attribute(per_page: dict[str, float], labels: dict[str, list[str]]) -> dict[str, float]:
    """Mean of the page values over the pages carrying each attribute label."""
    groups: dict[str, list[float]] = defaultdict(list)
    for img, value in per_page.items():
        for label in labels.get(img, []):
            groups[label].append(value)
    return {label: sum(v) / len(v) for label, v in sorted(groups.items())}
