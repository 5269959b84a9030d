"""`minuscule bench omnidoc` on a tiny hand-made set: output shape, missing files, bad inputs."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("apted")
pytest.importorskip("bs4")
pytest.importorskip("pylatexenc")

from minuscule.cli import main  # noqa: E402

PAGES = [
    {"layout_dets": [
        {"category_type": "title", "text": "A Title", "order": 1, "anno_id": 1},
        {"category_type": "text_block", "text": "The body of the first page.", "order": 2, "anno_id": 2},
        {"category_type": "table", "html": "<table><tr><td>1</td><td>2</td></tr></table>", "order": 3, "anno_id": 3}],
     "page_info": {"image_path": "one.jpg", "page_attribute": {}}, "extra": {"relation": []}},
    {"layout_dets": [{"category_type": "text_block", "text": "Second page text.", "order": 1, "anno_id": 1}],
     "page_info": {"image_path": "two.png", "page_attribute": {}}, "extra": {"relation": []}},
]


def _write(tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(PAGES))
    pred = tmp_path / "pred"
    pred.mkdir()
    (pred / "one.md").write_text("# A Title\n\nThe body of the first page.\n\n"
                                 "<table><tr><td>1</td><td>2</td></tr></table>\n")
    return gt, pred


def test_scores_a_folder_and_counts_a_missing_page_as_empty(tmp_path):
    gt, pred = _write(tmp_path)
    out = tmp_path / "out" / "r.json"
    assert main(["bench", "omnidoc", "--gt", str(gt), "--pred", str(pred), "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["missing_predictions"] == ["two.png"]
    assert r["pages"]["one.jpg"]["text_edit"] == 0 and r["pages"]["two.png"]["text_edit"] == 1
    assert r["text_edit"] == pytest.approx(0.5)
    assert r["table_teds"] == 1.0 and r["table_teds_s"] == 1.0
    # The only predicted table is prediction 0, which the published rule leaves without a position,
    # so the table's order is missing from the predicted sequence: [1, 2] against [1, 2, 3].
    assert r["pages"]["one.jpg"]["reading_order_edit"] == pytest.approx(1 / 3)
    assert r["pages"]["two.png"]["reading_order_edit"] == 1
    assert r["overall_without_cdm"] == pytest.approx((50 + 100) / 2)
    assert r["environment"]["cores"] >= 1 and "torch" in r["environment"]
    per_page = json.loads((out.parent / "pred_quick_match_text_block_per_page_edit.json").read_text())
    assert per_page == {"one.jpg": 0.0, "two.png": 1.0}


def test_baseline_folder_gives_ratios(tmp_path, capsys):
    gt, pred = _write(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["bench", "omnidoc", "--gt", str(gt), "--pred", str(pred), "--baseline", str(empty)]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["baseline"]["text_edit"] == 1.0 and r["ratios_vs_baseline"]["text_edit"] == pytest.approx(0.5)
    assert r["ratios_vs_baseline"]["table_teds"] is None  # the empty baseline scores 0 TEDS


@pytest.mark.parametrize("case", ["no_gt", "bad_json", "not_pages", "no_pred_dir", "block_without_id"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    gt, pred = _write(tmp_path)
    if case == "no_gt":
        gt = tmp_path / "missing.json"
    elif case == "bad_json":
        gt.write_text("{not json")
    elif case == "not_pages":
        gt.write_text(json.dumps({"pages": []}))
    elif case == "no_pred_dir":
        pred = tmp_path / "nowhere"
    else:
        broken = json.loads(json.dumps(PAGES))
        del broken[0]["layout_dets"][1]["anno_id"]
        gt.write_text(json.dumps(broken))
    assert main(["bench", "omnidoc", "--gt", str(gt), "--pred", str(pred)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
