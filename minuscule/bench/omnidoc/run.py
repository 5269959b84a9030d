"""`minuscule bench omnidoc`: score a folder of predicted Markdown pages against OmniDocBench v1.6 GT."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from minuscule.atomic import atomic_write
from minuscule.bench.emit import emit_json
from minuscule.bench.env import environment as _environment
from minuscule.errors import InputError, MissingExtraError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gt", required=True, help="OmniDocBench annotation JSON (list of pages)")
    parser.add_argument("--pred", required=True, help="folder of predictions, one <image stem>.md per page")
    parser.add_argument("--json", help="write the result here instead of stdout")
    parser.add_argument("--per-page-dir",
                        help="folder for per-page files in the published form (default: beside --json)")
    parser.add_argument("--baseline", help="second prediction folder scored in the same run; ratios are reported")


def run(args: argparse.Namespace) -> int:
    try:
        _require_extras()
        result = evaluate(Path(args.gt), Path(args.pred), Path(args.baseline) if args.baseline else None)
        per_page_dir = args.per_page_dir or (str(Path(args.json).parent) if args.json else None)
        if per_page_dir:
            write_per_page_files(result.pop("_per_page_files"), Path(per_page_dir), Path(args.pred).name)
        result.pop("_per_page_files", None)
    except (InputError, MissingExtraError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    emit_json(result, args.json)
    return 0


def _require_extras() -> None:
    import importlib

    for module in ("apted", "lxml", "bs4", "pylatexenc", "scipy"):
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtraError(f"{module} (needed by the OmniDocBench scorer)", "eval") from None


def load_gt(path: Path) -> list[dict]:
    try:
        pages = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(str(path), f"not readable as JSON ({exc})") from None
    if not isinstance(pages, list) or not all(isinstance(p, dict) and "layout_dets" in p and "page_info" in p
                                              for p in pages):
        raise InputError(str(path), "expected a list of pages with 'layout_dets' and 'page_info'")
    return pages


def prediction_path(folder: Path, image_name: str) -> Path | None:
    """The published lookup order: X.md, X (minus .pdf).mmd, X (minus .pdf).md, X.jpg.md."""
    stem = image_name[:-4]
    for name in (stem + ".md", stem.replace(".pdf", "") + ".mmd", stem.replace(".pdf", "") + ".md",
                 image_name + ".md"):
        if (folder / name).exists():
            return folder / name
    return None


def score_folder(pages: list[dict], folder: Path, gt_name: str = "GT") -> dict[str, Any]:
    """All metrics for one prediction folder; a missing file is scored as an empty page (v1.6)."""
    from minuscule.bench.omnidoc.metrics import by_attribute, edit_distance, finite, page_labels, table_scores
    from minuscule.bench.omnidoc.page import score_page

    text, formula, table, order, missing = [], [], [], [], []
    table_pages, formula_pages = set(), set()
    for page in pages:
        img = os.path.basename(page["page_info"]["image_path"])
        kinds = {b.get("category_type") for b in page["layout_dets"] if not b.get("ignore", False)}
        if "table" in kinds:
            table_pages.add(img)
        if "equation_isolated" in kinds:
            formula_pages.add(img)
        path = prediction_path(folder, img)
        if path is None:
            missing.append(img)
            markdown = ""
        else:
            try:
                markdown = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(str(path), f"not readable as UTF-8 text ({exc})") from None
        try:
            samples = score_page(page, markdown)
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{gt_name}: page {img}", f"malformed annotation ({type(exc).__name__}: {exc})") from None
        text += samples.text
        formula += samples.formula
        table += samples.table
        if samples.reading_order:
            order.append(samples.reading_order)

    t, f, ro = edit_distance(text), edit_distance(formula), edit_distance(order)
    tab = table_scores(table, table_pages)
    tab_edit = edit_distance(table)
    text_edit, teds = finite(t.page_avg), finite(tab.page_teds)
    labels = {os.path.basename(p["page_info"]["image_path"]): page_labels(p["page_info"].get("page_attribute", {}))
              for p in pages}
    attribute_scores = {"text_edit": by_attribute(t.per_page, labels),
                        "formula_edit": by_attribute(f.per_page, labels),
                        "table_teds": by_attribute(tab.per_page_teds, labels),
                        "table_teds_s": by_attribute(tab.per_page_teds_s, labels),
                        "reading_order_edit": by_attribute(ro.per_page, labels)}
    pages_out: dict[str, dict] = {}
    for page in pages:
        img = os.path.basename(page["page_info"]["image_path"])
        pages_out[img] = {
            "text_edit": finite(t.per_page.get(img)), "formula_edit": finite(f.per_page.get(img)),
            "table_teds": finite(tab.per_page_teds.get(img)), "table_edit": finite(tab_edit.per_page.get(img)),
            "reading_order_edit": finite(ro.per_page.get(img)), "missing_prediction": img in missing}
    return {
        "text_edit": text_edit,
        "formula_edit": finite(f.page_avg),
        "formula_cdm": None,
        "table_teds": teds,
        "table_teds_s": finite(tab.page_teds_s),
        "table_edit": finite(tab_edit.page_avg),
        "reading_order_edit": finite(ro.page_avg),
        "overall": None,
        "overall_without_cdm": ((1 - text_edit) * 100 + teds * 100) / 2
        if text_edit is not None and teds is not None else None,
        "samples": {"text": t.samples, "formula": f.samples, "table": len(table), "reading_order": ro.samples},
        "all_samples": {"text_edit_whole": finite(t.whole), "text_edit_sample_avg": finite(t.sample_avg),
                        "table_teds": finite(tab.teds), "table_teds_s": finite(tab.teds_s)},
        "by_page_attribute": attribute_scores,
        "missing_predictions": missing,
        "pages": pages_out,
        "_per_page_files": {"text_block": t.per_page, "display_formula": f.per_page, "table": tab_edit.per_page,
                            "reading_order": ro.per_page, "table_per_table_TEDS": tab.per_table},
    }


def evaluate(gt_path: Path, pred_dir: Path, baseline_dir: Path | None = None) -> dict[str, Any]:
    pages = load_gt(gt_path)
    for folder in [pred_dir] + ([baseline_dir] if baseline_dir else []):
        if not folder.is_dir():
            raise InputError(str(folder), "not a folder of predictions")
    start = time.perf_counter()
    result = score_folder(pages, pred_dir, str(gt_path))
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {
        "benchmark": "omnidocbench-v1.6-end2end",
        "inputs": {"gt": str(gt_path), "pred": str(pred_dir), "pages": len(pages),
                   "baseline": str(baseline_dir) if baseline_dir else None},
        "environment": environment(),
        "definitions": {
            "text_edit": "mean over pages of Σ edit distance / Σ max length of matched text blocks (lower is better)",
            "table_teds": "mean over pages with GT tables of the page's mean TEDS (0 for a page without a match)",
            "reading_order_edit": "mean over pages of the edit distance of matched block orders",
            "formula_cdm": "null: CDM (LaTeX rendering + token matching) is not implemented",
            "overall": "null while formula_cdm is null; published: ((1-text_edit)*100 + table_teds*100 + cdm*100)/3",
            "overall_without_cdm": "((1-text_edit)*100 + table_teds*100)/2",
        },
        **result,
        "seconds": round(seconds, 3),
    }
    if baseline_dir:
        base = score_folder(pages, baseline_dir, str(gt_path))
        base.pop("_per_page_files")
        keys = ("text_edit", "table_teds", "table_teds_s", "reading_order_edit", "overall_without_cdm")
        out["baseline"] = {k: base[k] for k in keys}
        out["ratios_vs_baseline"] = {k: (result[k] / base[k] if result[k] is not None and base[k] else None)
                                     for k in keys}
    return out


def write_per_page_files(files: dict[str, dict], folder: Path, pred_name: str) -> None:
    """`<pred folder name>_quick_match_<element>_per_page_edit.json`, named like the published outputs."""
    for element, data in files.items():
        suffix = element if element == "table_per_table_TEDS" else f"{element}_per_page_edit"
        atomic_write(folder / f"{pred_name}_quick_match_{suffix}.json",
                     json.dumps(data, indent=4, ensure_ascii=False) + "\n")


def environment() -> dict[str, Any]:
    return _environment("torch", "rapidfuzz", "apted", "lxml", "pylatexenc", "beautifulsoup4", "scipy")
