"""olmOCR-Bench folders: test files, PDFs, prediction files, and the scores computed from them."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from minuscule.checks import BenchTest, TestOutcome, load_tests, synthesized_baseline
from minuscule.errors import InputError

BASELINE_GROUP = "baseline"
_PRED_NAME = re.compile(r"^(.*)_pg\d+_repeat\d+\.md$")


@dataclass
class Benchmark:
    """Every test of a data folder with the category (JSONL file stem, or "baseline") it counts in."""

    root: Path
    tests: list[BenchTest]
    category: dict[str, str]  # test id -> category
    pdfs: list[str]  # paths relative to pdfs/, e.g. "arxiv_math/2503.04465_pg3.pdf"

    @property
    def categories(self) -> list[str]:
        return list(dict.fromkeys(self.category[t.id] for t in self.tests))


def load_benchmark(root: str | Path, skip_baseline: bool = False) -> Benchmark:
    """Read `root/*.jsonl` and list `root/pdfs/**.pdf`; add the default baseline test for every PDF
    without one (filed under "baseline"), as the published harness does."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(str(root), "not a folder (expected an olmOCR-Bench bench_data folder)")
    files = sorted(root.glob("*.jsonl"))
    if not files:
        raise InputError(str(root), "no *.jsonl test files in this folder")
    pdf_dir = root / "pdfs"
    pdfs = sorted(p.relative_to(pdf_dir).as_posix() for p in pdf_dir.rglob("*.pdf")) if pdf_dir.is_dir() else []
    tests: list[BenchTest] = []
    category: dict[str, str] = {}
    for path in files:
        for test in load_tests(path):
            if test.id in category:
                raise InputError(str(path), f"test id {test.id!r} also appears in another file")
            category[test.id] = path.stem
            tests.append(test)
    # The harness synthesises baselines from the PDFs on disk; without PDFs, from the tests' PDFs.
    known = pdfs or sorted({t.pdf for t in tests})
    have_baseline = {t.pdf for t in tests if t.type == "baseline"}
    if not skip_baseline:
        for pdf in known:
            if pdf not in have_baseline:
                test = synthesized_baseline(pdf)
                category[test.id] = BASELINE_GROUP
                tests.append(test)
    else:
        tests = [t for t in tests if t.type != "baseline"]
    return Benchmark(root, tests, category, known)


def index_predictions(pred_dir: str | Path, pdfs: Sequence[str]) -> dict[tuple[str, int], list[Path]]:
    """Prediction files per (pdf, page): `<pdf minus .pdf>_pg<N>_repeat<R>.md` anywhere under pred_dir.

    A file counts for page P when its name contains `_pg<P>_`, the published harness's rule.
    """
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise InputError(str(pred_dir), "prediction folder does not exist")
    by_base: dict[str, list[Path]] = defaultdict(list)
    for path in pred_dir.rglob("*.md"):
        m = _PRED_NAME.match(path.relative_to(pred_dir).as_posix())
        if m:
            by_base[m.group(1)].append(path)
    index: dict[tuple[str, int], list[Path]] = {}
    for pdf in pdfs:
        base = pdf[:-4] if pdf.lower().endswith(".pdf") else pdf
        for path in sorted(by_base.get(base, ())):
            for page in map(int, re.findall(r"_pg(\d+)(?=_)", path.name)):
                index.setdefault((pdf, page), [])
                if path not in index[(pdf, page)]:
                    index[(pdf, page)].append(path)
    return index


def read_prediction(path: Path) -> str | None:
    """File text, or None when it cannot be read as UTF-8 (that repeat then fails)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def bootstrap_ci(
    groups: Sequence[Sequence[float]], samples: int = 1000, level: float = 0.95, seed: int | None = 0
) -> tuple[float, float]:
    """Percentile interval of the mean of group means, resampling tests with replacement within each group."""
    arrays = [np.asarray(g, dtype=np.float64) for g in groups if len(g)]
    if not arrays or samples <= 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    stats = np.zeros(samples)
    for arr in arrays:
        picks = rng.integers(0, len(arr), size=(samples, len(arr)))
        stats += arr[picks].mean(axis=1)
    stats /= len(arrays)
    alpha = (1.0 - level) / 2
    return (float(np.percentile(stats, alpha * 100)), float(np.percentile(stats, (1 - alpha) * 100)))


def summarize(bench: Benchmark, outcomes: Sequence[TestOutcome], samples: int = 1000, seed: int | None = 0) -> dict[str, Any]:
    """Per-category pass rates (majority verdicts), overall = their unweighted mean, bootstrap CI,
    per-type mean pass fractions, and the failed tests with their reasons."""
    by_cat: dict[str, list[float]] = {c: [] for c in bench.categories}
    by_type: dict[str, list[float]] = defaultdict(list)
    failed = []
    for out in outcomes:
        cat = bench.category[out.test.id]
        by_cat.setdefault(cat, []).append(1.0 if out.passed else 0.0)
        by_type[out.test.type].append(out.score)
        if not out.passed:
            failed.append(
                {
                    "id": out.test.id,
                    "category": cat,
                    "type": out.test.type,
                    "pdf": out.test.pdf,
                    "page": out.test.page,
                    "passes": out.passes,
                    "repeats": out.repeats,
                    "explanation": out.explanation,
                }
            )
    categories = {c: (sum(v) / len(v) if v else 0.0) for c, v in by_cat.items()}
    overall = sum(categories.values()) / len(categories) if categories else 0.0
    lo, hi = bootstrap_ci(list(by_cat.values()), samples=samples, seed=seed)
    return {
        "overall": overall,
        "ci95": [lo, hi],
        "categories": categories,
        "category_counts": {c: {"passed": int(sum(v)), "tests": len(v)} for c, v in by_cat.items()},
        "types": {t: sum(v) / len(v) for t, v in sorted(by_type.items())},
        "tests": len(outcomes),
        "failed": failed,
    }
