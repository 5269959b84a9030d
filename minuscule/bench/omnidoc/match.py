"""GT ↔ prediction matching: Hungarian for tables, the published quick-match for text and formulas."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

from minuscule.bench.omnidoc.formula_lines import sort_preds, split_gt_formulas, split_pred_formulas
from minuscule.bench.omnidoc.lines import IGNORED_CATEGORIES, Lines, edit_matrix, gt_position
from minuscule.bench.omnidoc.normalize import strip_formula_delimiters

CERTAIN = 0.25        # below this a pair is taken as matched before any merging
FUZZY_PIECE = 0.6     # a merged prediction piece must be this close to a window of the GT
REJECT = 0.7          # Hungarian pairs above this are undone
GT_IN_PRED = 0.4      # an unmatched GT this close to a window of a prediction joins that prediction
MAX_MERGE = 160


def match_tables(gt_items: list[dict], pred_items: list[dict], img: str) -> list[dict]:
    """One record per GT table: Hungarian on normalised-HTML edit distance, no merging."""
    lines = Lines(gt_items, pred_items, tables=True)
    records = []
    if not lines.gt_norm:
        return records

    def base(g: int) -> dict:
        return {"gt_idx": [g], "gt": lines.gt_raw[g], "norm_gt": lines.gt_norm[g],
                "gt_category_type": lines.gt_cat[g], "gt_position": [gt_position(gt_items[g])],
                "gt_attribute": [gt_items[g].get("attribute", {})], "img_id": img}

    if not lines.pred_norm:
        return [{**base(g), "pred_idx": [""], "pred": "", "norm_pred": "", "pred_category_type": "",
                 "pred_position": "", "edit": 1} for g in range(len(lines.gt_norm))]
    cost = edit_matrix(lines.gt_norm, lines.pred_norm)
    rows, cols = linear_sum_assignment(cost)
    assigned = dict(zip(rows.tolist(), cols.tolist()))
    for g in range(len(lines.gt_norm)):
        p = assigned.get(g, "")
        # As published, prediction 0 is falsy: it gets no category and no position (so it never
        # enters the reading order), although its text is scored.
        records.append({**base(g), "pred_idx": [p], "pred": lines.pred_raw[p] if p != "" else "",
                        "norm_pred": lines.pred_norm[p] if p != "" else "",
                        "pred_category_type": lines.pred_category(p) if p else "",
                        "pred_position": pred_items[p]["position"][0] if p else "",
                        "edit": cost[g, p] if p != "" else 1})
    return records


# --- quick match -------------------------------------------------------------------------------

def _window_distance(long: str, short: str) -> float:
    """Best normalised distance of `short` against equal-length windows of `long` (inf if none)."""
    best = float("inf")
    for i in range(len(long) - len(short) + 1):
        best = min(best, Levenshtein.distance(long[i:i + len(short)], short) / len(short))
    return best


def _piece_fits(gt: str, piece: str):
    """Window distance of a prediction piece inside the GT, or False when the piece is longer/empty."""
    if len(gt) >= len(piece) > 0:
        return _window_distance(gt, piece)
    return False


def _gt_fits(pred: str, gt: str) -> float:
    if len(pred) >= len(gt) > 0:
        return _window_distance(pred, gt)
    return 1


def _merge_ok(gt: str, pieces: list[str]) -> tuple[bool, bool]:
    """(take the last piece, keep extending) for a run of consecutive prediction pieces."""
    if len(pieces) == 1:
        return False, False
    current, merged = " ".join(pieces[:-1]), " ".join(pieces)
    if Levenshtein.distance(gt, merged) / max(len(gt), len(merged)) > \
            Levenshtein.distance(gt, current) / max(len(gt), len(current)):
        return False, False
    for piece in pieces[:-1]:
        d = _piece_fits(gt, piece)
        if d is False or d > FUZZY_PIECE:
            return False, False
    last = _piece_fits(gt, pieces[-1])
    if last is False:
        return False, False
    return last < FUZZY_PIECE, len(merged) <= len(gt)


def _best_runs(runs: list[list[int]], costs: list[float]) -> list[list[int]]:
    """Resolve overlapping runs: per overlap group keep the non-overlapping path of lowest mean cost."""
    if not runs:
        return []
    pairs = sorted(zip(runs, costs), key=lambda x: x[0][0])
    groups = [[pairs[0]]]
    for item in pairs[1:]:
        if any(k in member[0] for member in groups[-1] for k in item[0]):
            groups[-1].append(item)
        else:
            groups.append([item])
    final = []
    for group in groups:
        if len(group) == 1:
            final.append(group[0][0])
            continue
        paths: dict[int, list] = defaultdict(list)
        paths[0].append(group[0])
        for run in group[1:]:
            new_path = True
            for key in list(paths.keys()):
                path = paths[key]
                dup = same = False
                for member in list(path):
                    if member[0] == run[0]:
                        dup = same = True
                        if member[1] > run[1]:
                            path.remove(member)
                            path.append(run)
                    elif any(a == b for a in member[0] for b in run[0]):
                        dup = True
                if not dup:
                    path.append(run)
                    new_path = False
                if same:
                    new_path = False
            if new_path:
                paths[len(paths)].append(run)
        best_cost, best = float("inf"), []
        for path in paths.values():
            mean = sum(c for _, c in path) / len(path)
            if mean < best_cost:
                best, best_cost = [r for r, _ in path], mean
        final.extend(best)
    return final


def _merge_truncated(cost: np.ndarray, gts: list[str], preds: list[str]):
    """Join runs of consecutive predictions that together form one GT paragraph."""
    certain = np.argwhere(cost < CERTAIN)
    certain_gt = {int(i) for i in certain[:, 0]}
    certain_pred = {int(i) for i in certain[:, 1]}
    open_preds = [p for p in range(cost.shape[1]) if p not in certain_pred]
    runs, run_costs = [], []
    for g in (g for g in range(cost.shape[0]) if g not in certain_gt):
        best_run, best_cost = None, float("inf")
        for p in open_preds:
            step, pieces = 1, [preds[p]]
            while step < MAX_MERGE and p + step not in certain_pred and p + step < len(preds):
                pieces.append(preds[p + step])
                take, more = _merge_ok(gts[g], pieces)
                if not take:
                    break
                step += 1
                if not more:
                    break
            joined = " ".join(preds[p:p + step])
            d = Levenshtein.distance(gts[g], joined) / max(len(joined), len(gts[g]))
            if d < best_cost:
                best_run, best_cost = list(range(p, p + step)), d
        if best_run:
            runs.append(best_run)
            run_costs.append(best_cost)
    chosen = _best_runs(runs, run_costs)
    if not chosen:
        return cost, list(range(len(preds)))
    slots: list = list(range(len(preds)))
    for run in chosen:
        at = slots.index(run[0])
        del slots[at:at + len(run)]
        slots.insert(at, run)
    merged = [" ".join(preds[s[0]:s[-1] + 1]) if isinstance(s, list) else preds[s] for s in slots]
    return edit_matrix(gts, merged), slots


def _pair_unmatched(gts: list[str], preds: list[str], matches: dict) -> list[dict]:
    """Records for matched groups plus Hungarian leftovers (edit recomputed later from strings)."""
    out = []
    for key, info in matches.items():
        joined = " ".join(preds[k] for k in key)
        for g in sorted(set(info["gt"])):
            out.append({"gt_idx": g, "pred_idx": list(key), "pred": joined, "edit": info["edit"]})
    matched_gt = set().union(*[set(i["gt"]) for i in matches.values()])
    # Leftovers are iterated in *set* order, as published: for larger indices that is not sorted
    # order, and it decides how ties in the assignment below are broken.
    left_gt = list(set(range(len(gts))) - matched_gt)
    left_pred = list(set(range(len(preds))) - {k for key in matches for k in key if isinstance(k, int)})
    if left_pred and left_gt:
        d = [[Levenshtein.distance(gts[g], preds[p]) / max(len(gts[g]), len(preds[p])) for p in left_pred]
             for g in left_gt]
        for i, j in zip(*linear_sum_assignment(d)):
            out.append({"gt_idx": left_gt[i], "pred_idx": [left_pred[j]], "pred": preds[left_pred[j]], "edit": 1})
    elif left_pred:
        out.append({"gt_idx": "", "pred_idx": left_pred, "pred": " ".join(preds[p] for p in left_pred), "edit": 1})
    else:
        out += [{"gt_idx": g, "pred_idx": "", "pred": "", "edit": 1} for g in left_gt]
    return out


def _group_by_pred(records: list[dict], gts: list[str]) -> list[dict]:
    """One entry per prediction group (several GT may share one); unmatched GT get an empty pred."""
    out, seen_pred, seen_gt = [], set(), set()
    for rec in records:
        key = tuple(rec["pred_idx"]) if isinstance(rec["pred_idx"], list) else (rec["pred_idx"],)
        if key in seen_pred or key == ("",):
            continue
        entry = {"gt_idx": [rec["gt_idx"]], "pred_idx": rec["pred_idx"], "edit": rec["edit"]}
        for other in records:
            okey = tuple(other["pred_idx"]) if isinstance(other["pred_idx"], list) else (other["pred_idx"],)
            if okey == key and other is not rec:
                entry["gt_idx"].append(other["gt_idx"])
                seen_gt.add(other["gt_idx"])
        out.append(entry)
        seen_pred.add(key)
        seen_gt.add(rec["gt_idx"])
    out += [{"gt_idx": [g], "pred_idx": [""], "edit": 1} for g in range(len(gts)) if g not in seen_gt]
    return out


def _recompute(matches: dict, gts: list[str], preds: list[str]) -> None:
    for key, info in matches.items():
        members = sorted(set(info["gt"]))
        if not members:
            info["edit"] = 1
        elif len(members) > 1:
            gt = "".join(gts[g] for g in members)
            pred = preds[key[0]]
            info["edit"] = Levenshtein.distance(gt, pred) / max(len(gt), len(pred)) if gt or pred else 1
        else:
            pred = " ".join(preds[k] for k in key)
            gt = gts[members[0]]
            info["edit"] = Levenshtein.distance(gt, pred) / max(len(gt), len(pred)) if gt or pred else 1


def _majority_category(cats: list[str]) -> str:
    kept = [c for c in cats if c not in IGNORED_CATEGORIES]
    return Counter(kept or cats).most_common(1)[0][0]


def _finish(entries, gt_norm, gt_raw, gt_cat, gt_items, pred_norm, pred_raw, pred_items, img, gt_map, pred_map,
            wrap=True):
    """Fill strings, categories and positions; map local indices back to the page's line indices.

    With `wrap`, several GT (or predicted) formula rows in one record are joined as an array.
    """
    out = []
    for e in entries:
        pred_idx = e["pred_idx"] if isinstance(e["pred_idx"], list) else [e["pred_idx"]]
        gt_idx = e["gt_idx"] if isinstance(e["gt_idx"], list) else [e["gt_idx"]]
        has_pred = pred_idx != [""]
        pred_cat = (pred_items[pred_idx[0]].get("fine_category_type") or pred_items[pred_idx[0]]["category_type"]) \
            if has_pred else ""
        if gt_idx == [""]:
            if pred_cat == "equation_inline":
                continue
            cat = ""
        else:
            cat = _majority_category([gt_cat[g] for g in gt_idx])
        rec = {"gt_idx": gt_idx, "pred_idx": pred_idx, "edit": e["edit"], "gt_category_type": cat,
               "pred_category_type": pred_cat, "img_id": img}
        rec["gt_position"] = [gt_position(gt_items[g]) for g in gt_idx] if gt_idx != [""] else [""]
        rec["pred_position"] = pred_items[pred_idx[0]]["position"][0] if has_pred else ""
        if wrap and cat == "equation_isolated" and len(gt_idx) > 1:
            rec["gt"] = "\\begin{array}{l} " + " \\\\ ".join(
                "{" + strip_formula_delimiters(gt_raw[g]) + "}" for g in gt_idx) + " \\end{array}"
        else:
            rec["gt"] = "".join(gt_raw[g] for g in gt_idx) if gt_idx != [""] else ""
        if wrap and "equation" in pred_cat and len(pred_idx) > 1:
            rec["pred"] = "\\begin{array}{l} " + " \\\\ ".join(
                "{" + strip_formula_delimiters(pred_raw[p]) + "}" for p in pred_idx) + " \\end{array}"
        else:
            rec["pred"] = "".join(pred_raw[p] for p in pred_idx) if has_pred else ""
        rec["norm_gt"] = "".join(gt_norm[g] for g in gt_idx) if gt_idx != [""] else ""
        rec["norm_pred"] = "".join(pred_norm[p] for p in pred_idx) if has_pred else ""
        rec["gt_attribute"] = [gt_items[g].get("attribute", {}) for g in gt_idx] if gt_idx != [""] else [{}]
        if gt_idx != [""]:
            rec["gt_idx"] = [gt_map[g] for g in gt_idx]
        if has_pred:
            rec["pred_idx"] = [int(pred_map[p]) for p in pred_idx]
        out.append(rec)
    return out


def quick_match(gt_items: list[dict], pred_items: list[dict], img: str, split_pred: bool = True) -> list[dict]:
    """The published quick_match: ignore-category pass, truncation merge, Hungarian, GT-into-pred joins."""
    gt_items = split_gt_formulas(gt_items)
    pred_items = [item for _, item in sort_preds(pred_items)]
    if split_pred:
        pred_items = split_pred_formulas(pred_items)
    lines = Lines(gt_items, pred_items)
    gts, preds = lines.gt_norm, lines.pred_norm
    if not gts:
        return [{"gt_idx": [""], "gt": "", "pred_idx": [p], "pred": lines.pred_raw[p], "gt_position": [""],
                 "pred_position": pred_items[p]["position"][0], "norm_gt": "", "norm_pred": preds[p],
                 "gt_category_type": "", "pred_category_type": lines.pred_category(p), "gt_attribute": [{}],
                 "edit": 1, "img_id": img} for p in range(len(preds))]
    if not preds:
        return [{"gt_idx": [g], "gt": lines.gt_raw[g], "pred_idx": [""], "pred": "",
                 "gt_position": [gt_position(gt_items[g])], "pred_position": "", "norm_gt": gts[g], "norm_pred": "",
                 "gt_category_type": lines.gt_cat[g], "pred_category_type": "",
                 "gt_attribute": [gt_items[g].get("attribute", {})], "edit": 1, "img_id": img}
                for g in range(len(gts))]
    if len(gts) == 1 and len(preds) == 1:
        return [{"gt_idx": [0], "gt": lines.gt_raw[0], "pred_idx": [0], "pred": lines.pred_raw[0],
                 "gt_position": [gt_position(gt_items[0])], "pred_position": pred_items[0]["position"][0],
                 "norm_gt": gts[0], "norm_pred": preds[0], "gt_category_type": lines.gt_cat[0],
                 "pred_category_type": lines.pred_category(0), "gt_attribute": [gt_items[0].get("attribute", {})],
                 "edit": Levenshtein.distance(gts[0], preds[0]) / max(len(gts[0]), len(preds[0])), "img_id": img}]

    ign = [g for g in range(len(gts)) if lines.gt_cat[g] in IGNORED_CATEGORIES]
    body = [g for g in range(len(gts)) if lines.gt_cat[g] not in IGNORED_CATEGORIES]
    results_ignored, ignored_preds = [], []
    if ign:
        hits = np.argwhere(edit_matrix([gts[g] for g in ign], preds) < CERTAIN)
        ignored_preds = [int(h[1]) for h in hits]  # one slot per hit, duplicates included
        matches = {}
        for slot, (gi, _) in enumerate(hits):
            matches[int(gi)] = {"pred_indices": [slot], "edit_distance": None}
        grouped = _merge_matches(matches, {})
        ig_gts = [gts[g] for g in ign]
        ig_preds = [preds[p] for p in ignored_preds]
        _recompute(grouped, ig_gts, ig_preds)
        entries = _group_by_pred(_pair_unmatched(ig_gts, ig_preds, grouped), ig_gts)
        results_ignored = _finish(entries, ig_gts, [lines.gt_raw[g] for g in ign], [lines.gt_cat[g] for g in ign],
                                  [gt_items[g] for g in ign], ig_preds, [lines.pred_raw[p] for p in ignored_preds],
                                  [pred_items[p] for p in ignored_preds], img, ign, ignored_preds, wrap=False)

    rest = [p for p in range(len(preds)) if p not in ignored_preds]
    b_gts, b_preds = [gts[g] for g in body], [preds[p] for p in rest]
    cost = edit_matrix(b_gts, b_preds)
    cost, slots = _merge_truncated(cost, b_gts, b_preds)
    rows, cols = linear_sum_assignment(cost)
    matches, unmatched_gt = {}, []
    row_list = rows.tolist()
    for g in range(len(b_gts)):
        if g not in row_list:
            unmatched_gt.append(g)
            continue
        k = row_list.index(g)
        slot = slots[cols[k]]
        covered = list(range(slot[0], slot[-1] + 1)) if isinstance(slot, list) else [slot]
        if cost[g, cols[k]] > REJECT:
            unmatched_gt.append(g)
        else:
            matches[g] = {"pred_indices": covered, "edit_distance": cost[g, cols[k]]}
    joins = {}
    for p, pred in enumerate(b_preds):
        hits = [g for g in unmatched_gt if lines.gt_cat[body[g]] != "equation_isolated"
                and _gt_fits(pred, b_gts[g]) < GT_IN_PRED]
        if hits:
            joins[p] = hits
    grouped = _merge_matches(matches, joins)
    _recompute(grouped, b_gts, b_preds)
    entries = _group_by_pred(_pair_unmatched(b_gts, b_preds, grouped), b_gts)
    results = _finish(entries, b_gts, [lines.gt_raw[g] for g in body], [lines.gt_cat[g] for g in body],
                      [gt_items[g] for g in body], b_preds, [lines.pred_raw[p] for p in rest],
                      [pred_items[p] for p in rest], img, body, rest)
    return results + results_ignored


def _merge_matches(matches: dict, joins: dict) -> dict:
    """Group GT by the prediction run they matched; then attach fuzzy-contained unmatched GT."""
    final: dict[tuple, dict] = {}
    done: set[int] = set()
    for g, info in matches.items():
        key = tuple(sorted(info["pred_indices"]))
        if key in final:
            if g not in done:
                final[key]["gt"].append(g)
                done.add(g)
        else:
            final[key] = {"gt": [g], "edit": info["edit_distance"]}
            done.add(g)
    for p, gts in joins.items():
        key = (p,)
        if key in final:
            for g in gts:
                if g not in done:
                    final[key]["gt"].append(g)
                    done.add(g)
        else:
            final[key] = {"gt": [g for g in gts if g not in done], "edit": None}
            done.update(final[key]["gt"])
    return final
