"""`minuscule bench olmocr`: folder layout, missing files, repeats, aggregation, bootstrap, report, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from minuscule.bench.olmocr_data import bootstrap_ci, index_predictions, load_benchmark
from minuscule.cli import main

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "bench-samples" / "olmocr-bench"


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Two categories over three PDFs (one in a subfolder, one without tests of its own)."""
    root = tmp_path / "bench_data"
    (root / "pdfs" / "sub").mkdir(parents=True)
    for name in ("a.pdf", "b.pdf", "sub/c.pdf"):
        (root / "pdfs" / name).write_bytes(b"%PDF-1.4 placeholder")
    write_jsonl(root / "text.jsonl", [
        {"pdf": "a.pdf", "page": 1, "id": "a_present", "type": "present", "text": "hello world"},
        {"pdf": "a.pdf", "page": 1, "id": "a_absent", "type": "absent", "text": "Page 1 of 9"},
        {"pdf": "b.pdf", "page": 1, "id": "b_order", "type": "order", "before": "first", "after": "second"},
    ])
    write_jsonl(root / "tables.jsonl", [
        {"pdf": "sub/c.pdf", "page": 1, "id": "c_table", "type": "table", "cell": "2", "up": "1"},
        {"pdf": "sub/c.pdf", "page": 2, "id": "c_table_p2", "type": "table", "cell": "4", "left": "3"},
    ])
    return root


def write_preds(pred: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (pred / name).parent.mkdir(parents=True, exist_ok=True)
        (pred / name).write_text(text, encoding="utf-8")
    return pred


GOOD = {
    "a_pg1_repeat1.md": "hello world, nothing else",
    "b_pg1_repeat1.md": "first para\n\nsecond para",
    "sub/c_pg1_repeat1.md": "| x |\n|---|\n| 1 |\n| 2 |",
    "sub/c_pg2_repeat1.md": "<table><tr><td>3</td><td>4</td></tr></table>",
}


def run_cli(data: Path, pred: Path, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "result.json"
    code = main(["bench", "olmocr", "--data", str(data), "--pred", str(pred), "--json", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_load_benchmark_adds_baselines_per_pdf(data):
    bench = load_benchmark(data)
    assert bench.pdfs == ["a.pdf", "b.pdf", "sub/c.pdf"]
    assert bench.categories == ["tables", "text", "baseline"]
    assert [t.id for t in bench.tests if t.type == "baseline"] == ["a.pdf_baseline", "b.pdf_baseline", "sub/c.pdf_baseline"]
    assert all(t.page == 1 for t in bench.tests if t.type == "baseline")
    assert not any(t.type == "baseline" for t in load_benchmark(data, skip_baseline=True).tests)


def test_own_baseline_replaces_the_synthesized_one(data):
    write_jsonl(data / "blank.jsonl", [{"pdf": "b.pdf", "page": 1, "id": "b_blank", "type": "baseline", "max_length": 3}])
    bench = load_benchmark(data)
    assert "b.pdf_baseline" not in bench.category and bench.category["b_blank"] == "blank"


def test_all_pass(data, tmp_path):
    code, res = run_cli(data, write_preds(tmp_path / "pred", GOOD), tmp_path)
    assert code == 0
    assert res["overall"] == 1.0 and res["categories"] == {"tables": 1.0, "text": 1.0, "baseline": 1.0}
    assert res["tests"] == 8 and res["failed"] == [] and res["missing_pages"] == []
    assert res["environment"]["cores"] >= 1 and "torch" in res["environment"]
    assert res["ci95"] == [1.0, 1.0]


def test_missing_files_score_as_failures(data, tmp_path):
    files = dict(GOOD)
    del files["sub/c_pg2_repeat1.md"]  # one page of c missing
    del files["b_pg1_repeat1.md"]  # all of b missing
    code, res = run_cli(data, write_preds(tmp_path / "pred", files), tmp_path)
    assert code == 0
    assert res["missing_pages"] == ["b.pdf#1", "sub/c.pdf#2"]
    failed = {f["id"]: f for f in res["failed"]}
    assert set(failed) == {"b_order", "c_table_p2", "b.pdf_baseline"}
    assert failed["b_order"]["explanation"] == "missing prediction file" and failed["b_order"]["repeats"] == 0
    assert res["categories"] == {"tables": 0.5, "text": pytest.approx(2 / 3), "baseline": pytest.approx(2 / 3)}
    assert res["overall"] == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    code, _ = run_cli(data, tmp_path / "pred", tmp_path, "--strict")
    assert code == 1


def test_majority_over_repeats(data, tmp_path):
    files = dict(GOOD)
    files["a_pg1_repeat2.md"] = "goodbye"  # present fails here
    files["a_pg1_repeat3.md"] = "hello world"
    files["b_pg1_repeat2.md"] = "second then first"  # 1 of 2 passes: not a majority
    code, res = run_cli(data, write_preds(tmp_path / "pred", files), tmp_path)
    failed = {f["id"]: f for f in res["failed"]}
    assert "a_present" not in failed  # 2 of 3
    assert failed["b_order"]["passes"] == 1 and failed["b_order"]["repeats"] == 2
    assert res["types"]["present"] == pytest.approx(2 / 3)  # type means use pass fractions


def test_unreadable_prediction_fails_that_repeat(data, tmp_path):
    pred = write_preds(tmp_path / "pred", GOOD)
    (pred / "a_pg1_repeat1.md").write_bytes(b"\xff\xfe bad bytes")
    _, res = run_cli(data, pred, tmp_path)
    assert {f["id"] for f in res["failed"]} == {"a_present", "a_absent", "a.pdf_baseline"}


def test_index_uses_the_published_page_rule(tmp_path):
    pred = write_preds(tmp_path / "p", {
        "x_pg1_repeat1.md": "", "x_pg2_repeat1.md": "", "x_pg1_repeat2.md": "",
        "hf/y_pg2_pg1_repeat1.md": "", "xx_pg1_repeat1.md": "", "x_pg1.md": "",
    })
    idx = index_predictions(pred, ["x.pdf", "hf/y_pg2.pdf"])
    assert [p.name for p in idx[("x.pdf", 1)]] == ["x_pg1_repeat1.md", "x_pg1_repeat2.md"]
    assert [p.name for p in idx[("x.pdf", 2)]] == ["x_pg2_repeat1.md"]
    # `_pg<P>_` anywhere in the name counts, so this file serves pages 1 and 2 of y_pg2.pdf.
    assert idx[("hf/y_pg2.pdf", 1)] == idx[("hf/y_pg2.pdf", 2)]


def test_bootstrap_interval():
    groups = [[1.0] * 50 + [0.0] * 50, [1.0] * 90 + [0.0] * 10]
    lo, hi = bootstrap_ci(groups, samples=2000, seed=1)
    assert lo < 0.7 < hi and hi - lo < 0.2
    assert bootstrap_ci(groups, samples=2000, seed=1) == (lo, hi)  # seeded: reproducible
    # Each group's mean is resampled separately: a constant group adds no width.
    lo2, hi2 = bootstrap_ci([[1.0] * 100, [1.0] * 50 + [0.0] * 50], samples=2000, seed=1)
    lo3, hi3 = bootstrap_ci([[1.0] * 50 + [0.0] * 50], samples=2000, seed=1)
    assert hi2 - lo2 == pytest.approx((hi3 - lo3) / 2, rel=0.15)
    # Width shrinks like 1/sqrt(n).
    big = bootstrap_ci([[1.0] * 800 + [0.0] * 800], samples=2000, seed=1)
    assert (big[1] - big[0]) < (hi3 - lo3) / 3
    # Normal approximation for p=0.5, n=100: half-width about 1.96 * 0.05.
    assert (hi3 - lo3) / 2 == pytest.approx(0.098, abs=0.015)
    assert bootstrap_ci([], samples=10) == (0.0, 0.0)
    assert np.isfinite(lo)


def test_report_and_chart(data, tmp_path):
    files = dict(GOOD)
    files["a_pg1_repeat1.md"] = "goodbye | Page 1 of 9"
    report = tmp_path / "out" / "report.md"
    code, res = run_cli(data, write_preds(tmp_path / "pred", files), tmp_path, "--report", str(report))
    text = report.read_text()
    assert "Overall" in text and "| text |" in text and "a_present" in text and "expected absence" in text
    # Pipes and newlines inside explanations do not break the table.
    from minuscule.bench.report import write_report

    res["failed"][0]["explanation"] = "a | b\nc"
    write_report(res, report)
    assert "a \\| b c" in report.read_text()
    from PIL import Image

    with Image.open(report.with_suffix(".png")) as img:
        assert img.size[0] == 900 and img.size[1] > 100


def test_bad_inputs_are_one_line_errors(data, tmp_path, capsys):
    assert main(["bench", "olmocr", "--data", str(tmp_path / "nope"), "--pred", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope" in err
    assert main(["bench", "olmocr", "--data", str(data), "--pred", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    (data / "text.jsonl").write_text('{"pdf": "a.pdf", "page": 1, "id": "x", "type": "present"}\n')
    assert main(["bench", "olmocr", "--data", str(data), "--pred", str(tmp_path)]) == 2
    assert "text.jsonl:1" in capsys.readouterr().err


def test_stdout_json_when_no_file(data, tmp_path, capsys):
    pred = write_preds(tmp_path / "pred", GOOD)
    assert main(["bench", "olmocr", "--data", str(data), "--pred", str(pred)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overall"] == 1.0


def test_shared_sample_scored_with_the_math_renderer(tmp_path):
    src = SHARED / "bench_data"
    if not src.exists():
        pytest.skip("shared bench samples not present")
    pytest.importorskip("playwright")
    if shutil.which("chromium") is None:
        pytest.skip("chromium not installed")
    from minuscule.checks import load_tests

    tests = load_tests(src / "arxiv_math.jsonl")
    pred = tmp_path / "pred"
    by_pdf: dict[str, list[str]] = {}
    for t in tests[:10]:  # half the tests get their formula, the rest none
        by_pdf.setdefault(t.pdf, []).append(f"$${t.math}$$")
    for pdf in {t.pdf for t in tests}:
        write_preds(pred, {pdf[:-4] + "_pg1_repeat1.md": "Text.\n\n" + "\n\n".join(by_pdf.get(pdf, ["no math"]))})
    code, res = run_cli(src, pred, tmp_path)
    assert code == 0
    assert set(res["categories"]) == {"arxiv_math", "baseline"}
    assert res["category_counts"]["arxiv_math"]["tests"] == 20
    assert res["category_counts"]["baseline"] == {"passed": 7, "tests": 7}
    passed = 20 - sum(1 for f in res["failed"] if f["category"] == "arxiv_math")
    first10 = {t.id for t in tests[:10]}
    assert passed >= 10 and all(f["id"] not in first10 for f in res["failed"])


def test_engine_run_writes_the_published_layout_and_resumes(tmp_path):
    pdf = SHARED / "bench_data" / "pdfs" / "arxiv_math" / "2503.04465_pg3.pdf"
    if not pdf.exists():
        pytest.skip("shared bench samples not present")
    data = tmp_path / "data"
    (data / "pdfs" / "arxiv_math").mkdir(parents=True)
    shutil.copy(pdf, data / "pdfs" / "arxiv_math" / pdf.name)
    write_jsonl(data / "t.jsonl", [{"pdf": f"arxiv_math/{pdf.name}", "page": 1, "id": "p", "type": "present",
                                    "text": "the", "case_sensitive": False}])
    out, res_path = tmp_path / "lite", tmp_path / "r.json"
    args = ["bench", "olmocr", "--data", str(data), "--engine", "lite", "--out", str(out), "--json", str(res_path)]
    assert main(args) == 0
    md = out / "arxiv_math" / "2503.04465_pg3_pg1_repeat1.md"
    assert md.exists() and md.read_text().strip()
    res = json.loads(res_path.read_text())
    assert res["engine_run"]["pages_parsed"] == 1 and res["inputs"]["engine"] == "lite"
    assert res["overall"] == 1.0
    assert main(args) == 0  # a second run keeps what is there
    assert json.loads(res_path.read_text())["engine_run"]["pages_reused"] == 1
    assert main(["bench", "olmocr", "--data", str(data), "--engine", "nope", "--out", str(out)]) == 2
