"""TEDS for the table term: a fast row-aligned form of the PubTabNet cost model, and the exact APTED one.

The exact score is `minuscule.bench.omnidoc.teds.teds` (APTED over the whole tree), which takes
tens to hundreds of milliseconds per table in pure Python: too slow for a GRPO inner loop. The
fast score restricts the tree mapping to one that aligns rows with rows and, inside two aligned
rows, cells with cells (Selkow's top-down edit distance) under the same costs: insert/delete 1 per
node, `td` rename 1 if the spans differ else the normalised Levenshtein distance of the texts.
Every such mapping is a valid tree mapping, so fast TEDS <= exact TEDS, with equality whenever
the best mapping keeps rows whole (dropped/added rows, edited or swapped cells, split cells).
"""

from __future__ import annotations

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from minuscule.errors import MissingExtraError
from minuscule.rewards.page import Table

_BLOCK = 1 << 21  # entries of the batched cell-alignment table before it is split by pred rows


def teds_exact(pred: Table, gold: Table) -> float:
    """TEDS by APTED (omnidoc's implementation) on the canonical HTML of both tables."""
    from minuscule.bench.omnidoc.teds import teds

    try:
        return teds(pred.to_html(), gold.to_html())
    except ImportError as exc:
        raise MissingExtraError(f"{exc.name or 'apted'} (exact TEDS)", "eval") from None


def assignment(sim: np.ndarray) -> list[tuple[int, int]]:
    """Row -> column pairs maximising the total similarity (Hungarian; argmax for one row)."""
    if sim.shape[0] == 1:
        return [(0, int(np.argmax(sim[0])))]
    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError:
        raise MissingExtraError("scipy (matching several tables or formulas)", "eval") from None
    rows, cols = linear_sum_assignment(sim, maximize=True)
    return list(zip(rows.tolist(), cols.tolist()))


def _cells(table: Table) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Flat cell texts, flat (rowspan, colspan) codes and a row x slot index (-1 = no cell)."""
    texts = [cell[0] for row in table.rows for cell in row]
    spans = np.array([cell[1] * 100_003 + cell[2] for row in table.rows for cell in row], dtype=np.int64)
    width = max((len(row) for row in table.rows), default=0)
    index = np.full((len(table.rows), width), -1, dtype=np.int64)
    k = 0
    for r, row in enumerate(table.rows):
        index[r, : len(row)] = np.arange(k, k + len(row))
        k += len(row)
    return texts, spans, index


def _row_costs(pred: Table, gold: Table) -> np.ndarray:
    """cost[i, j]: edit distance between pred row i and gold row j as sequences of cells."""
    p_texts, p_spans, p_index = _cells(pred)
    g_texts, g_spans, g_index = _cells(gold)
    n_p, n_g = len(pred.rows), len(gold.rows)
    p_len = (p_index >= 0).sum(axis=1)
    g_len = (g_index >= 0).sum(axis=1)
    if not p_texts or not g_texts:
        return np.add.outer(p_len, g_len).astype(np.float64)
    cell_cost = cdist(p_texts, g_texts, scorer=Levenshtein.normalized_distance, dtype=np.float64)
    cell_cost[p_spans[:, None] != g_spans[None, :]] = 1.0
    # Padded slots get cost 0 here; the answer is read at each row's true length, which the
    # padding beyond it cannot influence.
    cell_cost = np.pad(cell_cost, ((0, 1), (0, 1)))
    kp, kg = p_index.shape[1], g_index.shape[1]
    out = np.empty((n_p, n_g))
    step = max(1, _BLOCK // max(1, n_g * (kp + 1) * (kg + 1)))
    for lo in range(0, n_p, step):
        hi = min(n_p, lo + step)
        sub = cell_cost[p_index[lo:hi][:, None, :, None], g_index[None, :, None, :]]  # (b, n_g, kp, kg)
        dp = np.empty((kp + 1, kg + 1, hi - lo, n_g))
        dp[:, 0] = np.arange(kp + 1)[:, None, None]
        dp[0, :] = np.arange(kg + 1)[:, None, None]
        for a in range(1, kp + 1):
            for b in range(1, kg + 1):
                np.minimum(np.minimum(dp[a - 1, b], dp[a, b - 1]) + 1.0, dp[a - 1, b - 1] + sub[:, :, a - 1, b - 1], out=dp[a, b])
        out[lo:hi] = dp[p_len[lo:hi][:, None], g_len[None, :], np.arange(hi - lo)[:, None], np.arange(n_g)[None, :]]
    return out


def teds_fast(pred: Table, gold: Table) -> float:
    """1 - D / max(nodes(pred), nodes(gold)); D = row alignment with cost(row i, row j) = cell
    alignment distance, deleting/inserting a row costs 1 + its cells. Nodes = rows + cells."""
    if pred.rows == gold.rows:
        return 1.0 if pred.rows else 0.0
    n_nodes = max(pred.n_nodes, gold.n_nodes)
    if not pred.rows or not gold.rows or n_nodes == 0:
        return 0.0
    costs = _row_costs(pred, gold)
    del_cost = [1 + len(row) for row in pred.rows]
    ins_cost = [1 + len(row) for row in gold.rows]
    prev = [0.0]
    for c in ins_cost:
        prev.append(prev[-1] + c)
    for i, d in enumerate(del_cost):
        cur = [prev[0] + d]
        row_costs = costs[i]
        for j, c in enumerate(ins_cost):
            cur.append(min(prev[j + 1] + d, cur[j] + c, prev[j] + row_costs[j]))
        prev = cur
    return max(0.0, 1.0 - prev[-1] / n_nodes)


def match_tables(pred: tuple[Table, ...], gold: tuple[Table, ...]) -> list[tuple[int, int | None]]:
    """One-to-one matching (Hungarian) of gold to predicted tables on the similarity of their cell
    texts and sizes; returns (gold index, pred index or None) for every gold table."""
    if not pred:
        return [(g, None) for g in range(len(gold))]
    sim = np.empty((len(gold), len(pred)))
    for g, gt in enumerate(gold):
        for p, pt in enumerate(pred):
            size = min(gt.n_nodes, pt.n_nodes) / max(gt.n_nodes, pt.n_nodes, 1)
            sim[g, p] = fuzz.ratio(gt.text, pt.text) / 100.0 + size
    got = dict(assignment(sim))
    return [(g, got.get(g)) for g in range(len(gold))]
