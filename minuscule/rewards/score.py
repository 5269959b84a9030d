"""The reward: floored terms multiplied, with a breakdown; a batch scorer sharing one KaTeX browser."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from minuscule.checks.base import BenchTest, load_tests, parse_test
from minuscule.errors import InputError
from minuscule.rewards.config import TERMS, RewardConfig, TermScore
from minuscule.rewards.page import split_page
from minuscule.rewards.terms import content_term, formula_term, table_term, unit_test_term
from minuscule.rewards.validity import format_term, repetition_term, structure_term

TestsLike = Sequence[BenchTest] | Sequence[Mapping[str, Any]] | str | Path | None


@dataclass(frozen=True)
class TermResult:
    """One term in the breakdown: raw score, the value that entered the product, applied or not."""

    raw: float
    floored: float
    applied: bool
    note: str = ""


@dataclass(frozen=True)
class RewardBreakdown:
    """The reward (product of the floored terms) and every term; `notes` say why terms are low."""

    reward: float
    terms: dict[str, TermResult]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "terms": {k: {"raw": t.raw, "floored": t.floored, "applied": t.applied} for k, t in self.terms.items()},
            "notes": list(self.notes),
        }


def as_tests(tests: TestsLike) -> list[BenchTest] | None:
    """Tests from BenchTest objects, olmOCR-Bench JSON records or a JSONL path (InputError if invalid)."""
    if tests is None:
        return None
    if isinstance(tests, (str, Path)):
        return load_tests(tests)
    return [t if isinstance(t, BenchTest) else parse_test(t) for t in tests]


def combine(raw: Mapping[str, TermScore], config: RewardConfig) -> RewardBreakdown:
    """R = prod over applied terms of max(floor, raw) ** weight; a term that does not apply is 1."""
    terms: dict[str, TermResult] = {}
    reward = 1.0
    notes: list[str] = []
    for name in TERMS:
        term = raw[name]
        value = min(1.0, max(0.0, float(term.raw)))
        floored = max(config.floors[name], value) if term.applied else 1.0
        reward *= floored ** config.weights[name]
        terms[name] = TermResult(value if term.applied else 1.0, floored, term.applied, term.note)
        if term.applied and term.note:
            notes.append(f"{name}: {term.note}")
    return RewardBreakdown(reward, terms, tuple(notes))


def raw_terms(prediction: str, reference: str, tests: Sequence[BenchTest] | None, config: RewardConfig,
              renderer: Any = None) -> dict[str, TermScore]:
    """Every term's raw score. `renderer` (a MathRenderer) enables KaTeX equivalence for formulas
    and math tests; without it formulas are compared as normalised LaTeX and no browser starts."""
    if not isinstance(prediction, str) or not isinstance(reference, str):
        raise InputError("reward", "prediction and reference must be strings")
    pred, ref = split_page(prediction), split_page(reference)
    return {
        "content": content_term(pred, ref),
        "formula": formula_term(pred, ref, renderer),
        "table": table_term(pred, ref, exact=config.exact_teds),
        "structure": structure_term(pred, ref),
        "unit_tests": unit_test_term(prediction, tests, renderer, config.unit_test_average),
        "repetition": repetition_term(pred, ref, config.cr_ok, config.cr_max, config.tail_repeats),
        "format": format_term(pred, ref),
    }


def score(prediction: str, reference: str, tests: TestsLike = None, config: RewardConfig | None = None,
          renderer: Any = None) -> RewardBreakdown:
    """The GRPO reward of one prediction against its reference transcription (and the page's tests)."""
    config = config or RewardConfig()
    return combine(raw_terms(prediction, reference, as_tests(tests), config, renderer), config)


class RewardScorer:
    """Scores many predictions with one configuration. With `render_math=True` one KaTeX browser
    (a `MathRenderer`, caching renders) serves every formula comparison and math test of the batch.

        with RewardScorer(render_math=True) as scorer:
            rewards = scorer.score_batch([(pred, ref, tests), ...])
    """

    def __init__(self, config: RewardConfig | None = None, render_math: bool = False, renderer: Any = None):
        self.config = config or RewardConfig()
        self._renderer = renderer
        self._own = False
        self.render_math = render_math or renderer is not None

    @property
    def renderer(self) -> Any:
        if self.render_math and self._renderer is None:
            from minuscule.checks.render import MathRenderer

            self._renderer, self._own = MathRenderer(), True
        return self._renderer

    def score(self, prediction: str, reference: str, tests: TestsLike = None) -> RewardBreakdown:
        return score(prediction, reference, tests, self.config, self.renderer)

    def score_batch(self, items: Iterable[tuple[str, str, TestsLike]]) -> list[RewardBreakdown]:
        """Score (prediction, reference, tests) triples; tests may be None."""
        return [self.score(pred, ref, tests) for pred, ref, tests in items]

    def rewards(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        """Just the rewards, for a trainer's reward function (one reference per prediction)."""
        if len(predictions) != len(references):
            raise InputError("reward", f"{len(predictions)} predictions for {len(references)} references")
        return [self.score(p, r).reward for p, r in zip(predictions, references)]

    def close(self) -> None:
        if self._own and self._renderer is not None:
            self._renderer.close()
        self._renderer, self._own = None, False

    def __enter__(self) -> "RewardScorer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
