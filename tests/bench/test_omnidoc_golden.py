"""The 18-page OmniDocBench demo: our v1.6 scores and per-page files equal the official golden outputs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

pytest.importorskip("apted")
pytest.importorskip("bs4")
pytest.importorskip("pylatexenc")

from minuscule.bench.omnidoc import run as omnidoc  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "bench-samples" / "omnidocbench"
GOLDEN = SAMPLES / "golden" / "v1.6_nocdm"
PER_PAGE = ("text_block", "display_formula", "table", "reading_order")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    if not (SAMPLES / "demo_data").is_dir() or not GOLDEN.is_dir():
        pytest.skip("../shared/bench-samples/omnidocbench is not present")
    out = tmp_path_factory.mktemp("omnidoc")
    args = argparse.Namespace(gt=str(SAMPLES / "demo_data/omnidocbench_demo/OmniDocBench_demo.json"),
                              pred=str(SAMPLES / "demo_data/end2end"), json=str(out / "result.json"),
                              per_page_dir=None, baseline=None)
    assert omnidoc.run(args) == 0
    return json.loads((out / "result.json").read_text()), out


def test_leaderboard_numbers_equal_golden(demo):
    result, _ = demo
    golden = json.loads((GOLDEN / "end2end_quick_match_metric_result.json").read_text())
    assert result["text_edit"] == pytest.approx(golden["text_block"]["all"]["Edit_dist"]["ALL_page_avg"], abs=2e-3)
    assert result["table_teds"] == pytest.approx(golden["table"]["page"]["TEDS"]["ALL"], abs=2e-3)
    assert result["table_teds_s"] == pytest.approx(golden["table"]["page"]["TEDS_structure_only"]["ALL"], abs=2e-3)
    assert result["reading_order_edit"] == pytest.approx(
        golden["reading_order"]["all"]["Edit_dist"]["ALL_page_avg"], abs=2e-3)
    assert result["formula_edit"] == pytest.approx(
        golden["display_formula"]["all"]["Edit_dist"]["ALL_page_avg"], abs=2e-3)
    assert result["table_edit"] == pytest.approx(golden["table"]["all"]["Edit_dist"]["ALL_page_avg"], abs=2e-3)
    # The published sample counts (text 237, formula 23, table 10, reading order 18).
    assert result["samples"] == {"text": 237, "formula": 23, "table": 10, "reading_order": 18}
    assert result["all_samples"]["table_teds"] == pytest.approx(golden["table"]["all"]["TEDS"]["all"], abs=2e-3)
    assert result["formula_cdm"] is None and result["overall"] is None
    expected = ((1 - result["text_edit"]) * 100 + result["table_teds"] * 100) / 2
    assert result["overall_without_cdm"] == pytest.approx(expected)


@pytest.mark.parametrize("element", PER_PAGE)
def test_per_page_files_equal_golden(demo, element):
    _, out = demo
    name = f"end2end_quick_match_{element}_per_page_edit.json"
    ours, golden = json.loads((out / name).read_text()), json.loads((GOLDEN / name).read_text())
    assert ours.keys() == golden.keys()
    for page, value in golden.items():
        assert ours[page] == pytest.approx(value, abs=1e-9), page


@pytest.mark.parametrize("ours,element,metric", [
    ("text_edit", "text_block", "Edit_dist"), ("formula_edit", "display_formula", "Edit_dist"),
    ("table_teds", "table", "TEDS"), ("table_teds_s", "table", "TEDS_structure_only"),
    ("reading_order_edit", "reading_order", "Edit_dist")])
def test_page_attribute_splits_equal_golden(demo, ours, element, metric):
    result, _ = demo
    golden = json.loads((GOLDEN / "end2end_quick_match_metric_result.json").read_text())[element]["page"][metric]
    golden = {k: v for k, v in golden.items() if k != "ALL"}
    assert result["by_page_attribute"][ours].keys() == golden.keys()
    for label, value in golden.items():
        assert result["by_page_attribute"][ours][label] == pytest.approx(value, abs=1e-9), label
