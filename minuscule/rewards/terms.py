"""Content, formula, table and unit-test terms: how much of the reference the prediction got right."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from minuscule.checks.base import BenchTest, CheckResult
from minuscule.checks.text import OrderTest
from minuscule.markup.text import normalize_cached
from minuscule.rewards.config import TermScore
from minuscule.rewards.latex import latex_tokens, token_string
from minuscule.rewards.page import PageParts
from minuscule.rewards.tables import assignment, match_tables, teds_exact, teds_fast


def content_term(pred: PageParts, ref: PageParts) -> TermScore:
    """s = 1 - Lev(p, r) / max(|p|, |r|) on normalised running text (tables, formulas, tags removed).

    Back-to-back repeats of a block of lines count once (`page.collapse_loops`): content says how
    much was read, the repetition term alone judges loops. Not applied when the reference has no
    running text (a page that is one table): its output would otherwise be judged on captions.
    """
    p, r = pred.text, ref.text
    if not r:
        return TermScore(1.0, False)
    s = Levenshtein.normalized_similarity(p, r)
    note = ""
    if s < 0.9:
        missing = max(0, len(r) - len(p))
        note = f"text edit similarity {s:.2f}" + (f" ({missing} characters short)" if missing > 0.1 * len(r) else "")
    return TermScore(s, True, note)


def formula_term(pred: PageParts, ref: PageParts, renderer: Any = None) -> TermScore:
    """s = (1/|F_ref|) * sum over reference formulas f of sim(f, m(f)); m = one-to-one matching
    (Hungarian) maximising total sim; sim = 1 - token-level Lev / max length on normalised LaTeX
    tokens (spacing dropped, aliases folded); unmatched = 0. With a renderer, a matched pair that
    KaTeX renders the same (olmOCR's comparison) counts 1. Not applied when the reference has none.
    """
    if not ref.formulas:
        return TermScore(1.0, False)
    if not pred.formulas:
        return TermScore(0.0, True, f"no formulas; the reference has {len(ref.formulas)}")
    r_tex = [f.latex for f in ref.formulas]
    p_tex = [f.latex for f in pred.formulas]
    sim = cdist([token_string(t) for t in r_tex], [token_string(t) for t in p_tex],
                scorer=Levenshtein.normalized_similarity, dtype=np.float64)
    pairs = assignment(sim)
    scores = []
    for g, p in pairs:
        s = float(sim[g, p])
        if s < 1.0 and renderer is not None and latex_tokens(r_tex[g]) and renderer.same(r_tex[g], p_tex[p]):
            s = 1.0
        scores.append(s)
    total = sum(scores) / len(r_tex)
    note = ""
    if total < 0.95:
        exact = sum(1 for s in scores if s >= 1.0)
        note = f"{exact}/{len(r_tex)} formulas exact, {len(pred.formulas)} predicted, mean similarity {total:.2f}"
    return TermScore(total, True, note)


def table_term(pred: PageParts, ref: PageParts, exact: bool = False) -> TermScore:
    """s = (1/|T_ref|) * sum over reference tables t of TEDS(m(t), t); m = one-to-one matching of
    tables (pipe tables included), unmatched = 0. Not applied when the reference has no table."""
    if not ref.tables:
        return TermScore(1.0, False)
    if not pred.tables:
        return TermScore(0.0, True, f"no tables; the reference has {len(ref.tables)}")
    score = teds_exact if exact else teds_fast
    scores = [score(pred.tables[p], ref.tables[g]) if p is not None else 0.0 for g, p in match_tables(pred.tables, ref.tables)]
    total = sum(scores) / len(scores)
    note = ""
    if total < 0.95:
        note = f"mean TEDS {total:.2f} over {len(ref.tables)} reference table(s), {len(pred.tables)} predicted"
        low = [i for i, s in enumerate(scores) if s < 0.9]
        if low:
            note += f"; low: " + ", ".join(f"table {i + 1} {scores[i]:.2f}" for i in low[:4])
    return TermScore(total, True, note)


class LatexStringMatcher:
    """Stands in for MathRenderer when no browser is wanted: every formula counts as rendering and
    two formulas are the same when their normalised LaTeX tokens are equal."""

    def render_many(self, formulas: list[str]) -> dict[str, str]:
        return {f: f for f in formulas}

    def same(self, reference: str, hypothesis: str) -> bool:
        return latex_tokens(reference) == latex_tokens(hypothesis)


_PASSED = CheckResult(True, "")


def _order_certainly_passes(test: BenchTest, markdown: str) -> bool:
    """Fast path for fuzzy order tests (fuzzysearch is pure Python here, ~0.2 ms a test): when
    `before` and `after` each occur exactly once in the normalised page, before first, the test
    passes. An exact occurrence is a distance-0 match, and the only one in its group of
    overlapping matches, so it survives consolidation as a start of its text. Anything else runs
    the check itself."""
    if not isinstance(test, OrderTest) or test.max_diffs == 0:
        return False
    page = normalize_cached(markdown)
    i = page.find(test.before)
    if i < 0 or page.find(test.before, i + 1) >= 0:
        return False
    j = page.find(test.after)
    return j > i and page.find(test.after, j + 1) < 0


def unit_test_term(markdown: str, tests: Sequence[BenchTest] | None, renderer: Any = None, average: str = "micro") -> TermScore:
    """s = passed / total ("micro"), or the mean over test types of each type's pass rate ("macro").
    The page's olmOCR-Bench tests run through `minuscule.checks`; not applied without tests."""
    if not tests:
        return TermScore(1.0, False)
    renderer = renderer if renderer is not None else LatexStringMatcher()
    by_type: dict[str, list[bool]] = {}
    failures: list[str] = []
    for test in tests:
        try:
            result = _PASSED if _order_certainly_passes(test, markdown) else test.run(markdown, renderer=renderer)
        except RecursionError:
            passed, why = False, "check error: recursion limit"
        else:
            passed, why = result.passed, result.explanation
        by_type.setdefault(test.type, []).append(passed)
        if not passed:
            failures.append(f"{test.type} {test.id}: {why}")
    if average == "macro":
        s = sum(sum(v) / len(v) for v in by_type.values()) / len(by_type)
    else:
        s = sum(sum(v) for v in by_type.values()) / len(tests)
    note = ""
    if failures:
        rates = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(by_type.items()))
        note = f"unit tests passed: {rates}; first failure: {failures[0]}"
    return TermScore(s, True, note)
