"""Run many tests over many pages: majority over repeats, missing pages failed, one math renderer shared."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from minuscule.checks.base import BenchTest, CheckResult
from minuscule.checks.render import MathRenderer

MISSING = "missing prediction file"
UNREADABLE = "prediction file is not readable UTF-8 text"


@dataclass(frozen=True)
class TestOutcome:
    """A test over all repeats of its page: pass fraction, majority verdict, first failure reason."""

    test: BenchTest
    passes: int
    repeats: int
    passed: bool
    explanation: str

    @property
    def score(self) -> float:
        return self.passes / self.repeats if self.repeats else 0.0


def run_one(test: BenchTest, markdowns: Sequence[str | None], renderer: MathRenderer | None = None) -> TestOutcome:
    """Run a test on every repeat of its page. Passed when strictly more than half the repeats pass;
    no repeats at all (missing files) is a failure, and so is an unreadable repeat (None)."""
    if not markdowns:
        return TestOutcome(test, 0, 0, False, MISSING)
    passes = 0
    reasons: list[str] = []
    for md in markdowns:
        try:
            if md is None:
                result = CheckResult(False, UNREADABLE)
            else:
                result = test.run(md, renderer=renderer)
        except RecursionError:
            result = CheckResult(False, "check error: recursion limit")
        if result.passed:
            passes += 1
        else:
            reasons.append(result.explanation)
    passed = passes / len(markdowns) > 0.5
    return TestOutcome(test, passes, len(markdowns), passed, reasons[0] if reasons else "")


def run_tests(
    tests: Sequence[BenchTest],
    markdown_by_key: Mapping[tuple[str, int], str | Sequence[str]],
    renderer: MathRenderer | None = None,
) -> list[TestOutcome]:
    """Run each test on the prediction(s) for its (pdf, page); a str counts as one repeat.

    Math tests share `renderer` (or the process-wide one, started only if a math test needs it).
    """
    out: list[TestOutcome] = []
    for test in tests:
        got = markdown_by_key.get(test.key, ())
        repeats = [got] if isinstance(got, str) else list(got)
        out.append(run_one(test, repeats, renderer))
    return out
