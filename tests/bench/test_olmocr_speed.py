"""Scoring speed of the olmOCR-Bench checks: 5,000 non-math tests in the released benchmark's mix."""

from __future__ import annotations

import json
import os
import random
import time

import pytest

from minuscule.bench.olmocr_data import Benchmark, summarize
from minuscule.checks import parse_test, run_one
from minuscule.markup.text import normalize_text

# Non-math tests per type in the released olmOCR-Bench (present, absent, order, table, baseline).
MIX = {"present": 721, "absent": 823, "order": 1061, "table": 1020, "baseline": 1403}
WORDS = ("alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone paper "
         "market letter number figure section result method table column value report").split()


def make_page(rng: random.Random, n_words: int, table: bool) -> str:
    paras = []
    for _ in range(8):
        paras.append(" ".join(rng.choice(WORDS) for _ in range(n_words // 8)).capitalize() + ".")
    if table:
        rows = ["<tr>" + "".join(f"<th>Head {c}</th>" for c in range(6)) + "</tr>"]
        for r in range(12):
            rows.append("<tr>" + "".join(f"<td>{rng.randint(0, 9999)}.{r}{c}</td>" for c in range(6)) + "</tr>")
        paras.insert(3, "<table>" + "".join(rows) + "</table>")
    return "\n\n".join(paras)


def make_workload(seed: int = 0):
    """(tests, pages): ~1,400 pages like the benchmark's, tests drawn from their text."""
    rng = random.Random(seed)
    pages: dict[tuple[str, int], str] = {}
    n_pages = MIX["baseline"]
    for i in range(n_pages):
        pages[(f"doc{i}.pdf", 1)] = make_page(rng, 700, table=i % 7 == 0)
    keys = list(pages)
    table_keys = [k for k in keys if "<table>" in pages[k]]
    records = []
    for kind, count in MIX.items():
        for j in range(count):
            key = rng.choice(table_keys if kind == "table" else keys)
            text = normalize_text(pages[key])
            rec = {"pdf": key[0], "page": 1, "id": f"{kind}{j}", "type": kind, "max_diffs": rng.choice([0, 0, 1, 3])}
            start = rng.randrange(0, max(1, len(text) - 200))
            if kind in ("present", "absent"):
                rec["text"] = text[start : start + rng.randint(15, 120)].strip() or "alpha"
                rec["case_sensitive"] = rng.random() < 0.5
                if kind == "absent" and rng.random() < 0.5:
                    rec["first_n" if rng.random() < 0.5 else "last_n"] = 300
            elif kind == "order":
                rec["before"] = text[start : start + 40].strip() or "alpha beta"
                rec["after"] = text[start + 80 : start + 120].strip() or "gamma delta"
                rec["max_diffs"] = min(rec["max_diffs"], 3)
            elif kind == "table":
                rec["cell"] = str(rng.randint(0, 9999))
                rec[rng.choice(["up", "left", "top_heading", "right"])] = f"Head {rng.randint(0, 5)}"
            else:
                rec["pdf"] = keys[j][0]
                rec.pop("max_diffs")
            records.append(rec)
    return [parse_test(r) for r in records], pages


def score_workload(tests, pages) -> float:
    start = time.perf_counter()
    outcomes = [run_one(t, [pages[t.key]]) for t in tests]
    bench = Benchmark(root=None, tests=tests, category={t.id: t.type for t in tests}, pdfs=[])
    summarize(bench, outcomes)
    return time.perf_counter() - start


@pytest.mark.slow
def test_scoring_5000_non_math_tests_under_30_seconds():
    tests, pages = make_workload()
    assert len(tests) == sum(MIX.values())
    # Baseline in the same run: normalising every page once, the floor any scorer pays.
    t0 = time.perf_counter()
    for text in pages.values():
        normalize_text(text)
    floor = time.perf_counter() - t0
    seconds = score_workload(tests, pages)
    print(json.dumps({
        "benchmark": "olmocr-scoring-speed",
        "inputs": {"tests": len(tests), "pages": len(pages), "mix": MIX},
        "environment": {"cores": len(os.sched_getaffinity(0))},
        "seconds": round(seconds, 3),
        "tests_per_second": round(len(tests) / seconds, 1),
        "normalize_all_pages_seconds": round(floor, 3),
        "ratio_vs_normalize_floor": round(seconds / floor, 1),
    }))
    assert seconds < 30.0
