"""olmOCR-Bench unit tests (present, absent, order, table, math, baseline) with the published pass rules.

    tests = load_tests("bench_data/table_tests.jsonl")
    result = tests[0].run(markdown)            # CheckResult(passed, explanation)
    outcomes = run_tests(tests, {(pdf, page): markdown, ...}, renderer=MathRenderer())
"""

from minuscule.checks import baseline as _baseline, math as _math, table as _table, text as _text  # noqa: F401  (register types)
from minuscule.checks.base import TEST_TYPES, BenchTest, CheckResult, load_tests, parse_test
from minuscule.checks.baseline import BaselineTest, synthesized_baseline
from minuscule.checks.math import MathTest
from minuscule.checks.render import MathRenderer, RenderedFormula, default_renderer, same_formula
from minuscule.checks.runner import MISSING, TestOutcome, run_one, run_tests
from minuscule.checks.table import TableTest
from minuscule.checks.text import OrderTest, PresenceTest

__all__ = [
    "MISSING",
    "TEST_TYPES",
    "BaselineTest",
    "BenchTest",
    "CheckResult",
    "MathRenderer",
    "MathTest",
    "OrderTest",
    "PresenceTest",
    "RenderedFormula",
    "TableTest",
    "TestOutcome",
    "default_renderer",
    "load_tests",
    "parse_test",
    "run_one",
    "run_tests",
    "same_formula",
    "synthesized_baseline",
]
