"""Reward configuration (floors, weights, term switches) and the value one term returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

TERMS = ("content", "formula", "table", "structure", "unit_tests", "repetition", "format")

# Published floors (training.md §3.7): structure, unit tests and format 0.2, table 0.1; none for
# repetition, so that a loop vetoes the sample; content and formula have none published.
DEFAULT_FLOORS = MappingProxyType(
    {"content": 0.0, "formula": 0.0, "table": 0.1, "structure": 0.2, "unit_tests": 0.2, "repetition": 0.0, "format": 0.2}
)
DEFAULT_WEIGHTS = MappingProxyType({name: 1.0 for name in TERMS})


@dataclass(frozen=True)
class TermScore:
    """One term: raw score in [0, 1], whether it applies to this page, why it is low (or '')."""

    raw: float
    applied: bool = True
    note: str = ""


@dataclass(frozen=True)
class RewardConfig:
    """R = prod over applied terms k of max(floor_k, s_k) ** weight_k; terms that do not apply are 1.

    `exact_teds` scores tables with APTED (omnidoc's TEDS) instead of the row-aligned fast form.
    `unit_test_average` is "micro" (passed / total) or "macro" (mean of per-type pass rates).
    """

    floors: Mapping[str, float] = field(default_factory=lambda: DEFAULT_FLOORS)
    weights: Mapping[str, float] = field(default_factory=lambda: DEFAULT_WEIGHTS)
    exact_teds: bool = False
    unit_test_average: str = "micro"
    # Repetition: compression-ratio excess over the reference's own ratio that is still fine,
    # and the one at which the term reaches 0 (Whisper's absolute cut-off is 2.4).
    cr_ok: float = 1.5
    cr_max: float = 2.5
    # A trailing n-gram repeated more often than this means the output ran into the token limit.
    tail_repeats: int = 30

    def __post_init__(self) -> None:
        for name, table in (("floors", self.floors), ("weights", self.weights)):
            unknown = set(table) - set(TERMS)
            if unknown:
                raise ValueError(f"unknown reward term(s) in {name}: {', '.join(sorted(unknown))}")
        object.__setattr__(self, "floors", MappingProxyType({**DEFAULT_FLOORS, **self.floors}))
        object.__setattr__(self, "weights", MappingProxyType({**DEFAULT_WEIGHTS, **self.weights}))
        if any(not 0.0 <= v <= 1.0 for v in self.floors.values()):
            raise ValueError("floors must lie in [0, 1]")
        if any(v < 0 for v in self.weights.values()):
            raise ValueError("weights must be >= 0")
        if self.unit_test_average not in ("micro", "macro"):
            raise ValueError("unit_test_average must be 'micro' or 'macro'")
        if not 1.0 <= self.cr_ok < self.cr_max:
            raise ValueError("need 1 <= cr_ok < cr_max")

    def __hash__(self) -> int:  # mappings are read-only views, hash their contents
        return hash((tuple(sorted(self.floors.items())), tuple(sorted(self.weights.items())), self.exact_teds,
                     self.unit_test_average, self.cr_ok, self.cr_max, self.tail_repeats))
