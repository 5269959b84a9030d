"""math: a formula of the page equals the reference, exactly or once both are rendered by KaTeX."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from minuscule.checks.base import REQUIRED, BenchTest, CheckResult, need_str, register
from minuscule.checks.render import MathRenderer, default_renderer
from minuscule.markup.math import extract_math


@dataclass(frozen=True, kw_only=True)
class MathTest(BenchTest):
    """Candidates are the page's delimited formulas. Pass on an exact string match; otherwise
    render the reference and the candidates (most similar first) and pass if the reference's
    MathML is contained in a candidate's, or its glyphs can be matched with the same neighbours."""

    math: str
    ignore_dollar_delimited: bool = False

    def run(self, markdown: str, renderer: MathRenderer | None = None) -> CheckResult:
        candidates = extract_math(markdown, dollars=not self.ignore_dollar_delimited)
        if self.math in candidates:
            return CheckResult(True, "")
        if not candidates:
            return CheckResult(False, f"no formulas on the page; expected {_short(self.math)!r}")
        renderer = renderer or default_renderer()
        candidates.sort(key=lambda c: -fuzz.ratio(c, self.math))
        # One browser round trip for the page's formulas; later tests on the page hit the cache.
        renders = renderer.render_many([self.math, *candidates])
        reference = renders[self.math]
        if reference is None:
            return CheckResult(False, f"reference formula does not render in KaTeX: {_short(self.math)!r}")
        for cand in candidates:
            if renders[cand] is not None and renderer.same(self.math, cand):
                return CheckResult(True, "")
        return CheckResult(False, f"no formula matches {_short(self.math)!r} (closest: {_short(candidates[0])!r})")


@register(("math",), {"math": REQUIRED, "ignore_dollar_delimited": False})
def _build_math(values: dict[str, Any], common: dict[str, Any]) -> MathTest:
    math = need_str(values, "math")
    if not math.strip():
        raise ValueError("'math' is empty")
    return MathTest(**common, math=math, ignore_dollar_delimited=bool(values["ignore_dollar_delimited"]))


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "..."
