"""OmniDocBench scorer pieces on hand-made inputs: normalisation, splitting, matching, TEDS, metrics."""

from __future__ import annotations

import pytest

pytest.importorskip("apted")
pytest.importorskip("bs4")
pytest.importorskip("pylatexenc")

from minuscule.bench.omnidoc.formula_lines import formula_rows, split_gt_formulas  # noqa: E402
from minuscule.bench.omnidoc.lines import ned  # noqa: E402
from minuscule.bench.omnidoc.match import match_tables, quick_match  # noqa: E402
from minuscule.bench.omnidoc.metrics import edit_distance, table_scores  # noqa: E402
from minuscule.bench.omnidoc.normalize import (  # noqa: E402
    clean_string, normalized_formula, normalized_html_table, normalized_text, strip_formula_tags)
from minuscule.bench.omnidoc.page import gt_elements, reading_order, score_page  # noqa: E402
from minuscule.bench.omnidoc.split import split_markdown  # noqa: E402
from minuscule.bench.omnidoc.table_extract import html_tables, markdown_tables_to_html  # noqa: E402
from minuscule.bench.omnidoc.teds import teds  # noqa: E402

# --- normalisation ------------------------------------------------------------------------------


def test_text_keeps_only_word_characters_and_cjk():
    assert clean_string("Hello, world!\n  (2024) — 中文。") == "Helloworld2024中文"
    assert clean_string("α-β_γ") == "αβ_γ"  # \w is Unicode-aware; underscore survives


def test_inline_math_with_scripts_becomes_unicode_text():
    assert normalized_text(r"energy $E=mc^2$ here") == "energyEmc2here"
    # Without ^, _ or a macro the formula is left as typed (its $ are then dropped as punctuation).
    assert normalized_text("cost $5 and $6") == "cost5and6"


def test_circled_numbers_match_plain_digits():
    assert normalized_text("① step") == normalized_text("1 step") == "1step"


def test_formula_normalisation_drops_fonts_spacing_tags_and_case():
    a = normalized_formula(r"$$ \mathbf{X} = \left( a \, + b \right) \tag{3} $$")
    b = normalized_formula(r"\[X=(a+b)\]")
    assert a == b == "x=(a+b)"
    assert strip_formula_tags(r"a=b \tag*{(1)} \nonumber") == "a=b  "


def test_table_normalisation_unifies_header_cells_and_wrappers():
    a = normalized_html_table("<table><thead><tr><th>A</th></tr></thead><tbody><tr><td>$5\\%$</td></tr></tbody></table>")
    b = normalized_html_table("<table><tr><td>A</td></tr><tr><td>5%</td></tr></table>")
    assert a == b == '<html><body><table border="1" ><tr><td>A</td></tr><tr><td>5%</td></tr></table></body></html>'
    assert normalized_html_table("no table here") == ""


# --- splitting predicted Markdown ----------------------------------------------------------------


def test_split_separates_text_display_math_and_tables():
    md = "Intro text.\n\n$$x^2+1$$\n\nSee $a_1$ here.\n\n<table><tr><td>1</td></tr></table>\n\nEnd."
    items = split_markdown(md)
    assert [i["content"] for i in items["html_table"]] == ["<table><tr><td>1</td></tr></table>"]
    display = [i for i in items["equation_isolated"] if i.get("fine_category_type") != "equation_inline"]
    assert [i["content"] for i in display] == [r"\[x^2+1\]"]
    texts = [i["content"] for i in items["text_all"]]
    assert texts == ["Intro text.", "See $a_1$ here.", "End."]
    # Blanked spans keep offsets: the table item points at the table in the original string.
    start, end = items["html_table"][0]["position"]
    assert md[start:end].startswith("<table>")


def test_nested_html_tables_give_one_outer_table():
    text = "a <table><tr><td><table><tr><td>x</td></tr></table></td></tr></table> b"
    spans = html_tables(text)
    assert len(spans) == 1 and text[spans[0][0]:spans[0][1]].count("<table>") == 2


def test_markdown_pipe_table_becomes_html_with_spans():
    html = markdown_tables_to_html("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert '<td colspan="1" rowspan="1">a</td>' in html and '<td colspan="1" rowspan="1">2</td>' in html
    items = split_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert len(items["html_table"]) == 1 and items["html_table"][0]["fine_category_type"] == "md2html_table"


def test_multirow_formula_is_split_per_row():
    rows = formula_rows(r"\begin{array}{l} a=1 \\ b=2 \end{array}")
    assert rows and [r["content"] for r in rows[1]] == ["a=1", "b=2"]
    gt = split_gt_formulas([{"category_type": "equation_isolated", "order": 7,
                             "latex": r"$$\begin{aligned} x&=1 \\ y&=2 \end{aligned}$$"}])
    assert [g["order"] for g in gt] == [7.001, 7.002]
    assert formula_rows(r"\begin{array}{cc} a & b \\ c & d \end{array}") is None  # a real matrix stays whole


# --- matching ------------------------------------------------------------------------------------


def _gt(category, text, order):
    return {"category_type": category, "text": text, "order": order, "anno_id": order, "attribute": {}}


def _pred(text, start):
    return {"category_type": "text_all", "position": [start, start + len(text)], "content": text,
            "fine_category_type": "text_block"}


def test_quick_match_pairs_paragraphs_and_joins_truncated_predictions():
    gt = [_gt("text_block", "The quick brown fox jumps over the lazy dog near the river bank", 1),
          _gt("text_block", "Completely different second paragraph about tables", 2)]
    preds = [_pred("Completely different second paragraph about tables", 0),
             _pred("The quick brown fox jumps over", 60), _pred("the lazy dog near the river bank", 100)]
    records = {tuple(r["gt_idx"]): r for r in quick_match(gt, preds, "p.jpg")}
    assert records[(1,)]["edit"] == 0
    assert records[(0,)]["pred_idx"] == [1, 2]  # the two halves became one prediction
    assert records[(0,)]["edit"] < 0.05


def test_quick_match_repairs_rejected_pairs_as_leftovers():
    gt = [_gt("text_block", "alpha beta gamma delta", 1), _gt("text_block", "epsilon zeta eta theta", 2)]
    preds = [_pred("alpha beta gamma delta", 0), _pred("zzzzzzzzzzzzzzzzzzzz", 30)]
    records = quick_match(gt, preds, "p.jpg")
    by_gt = {tuple(r["gt_idx"]): r for r in records}
    assert by_gt[(0,)]["edit"] == 0
    # Leftovers are paired by a second assignment and scored on their real strings later.
    assert by_gt[(1,)]["pred_idx"] == [1]


def test_header_matches_are_set_aside():
    gt = [_gt("header", "Journal of Things 2024", 1), _gt("text_block", "Body text of the page", 2)]
    preds = [_pred("Journal of Things 2024", 0), _pred("Body text of the page", 30)]
    cats = {r["gt_category_type"]: r for r in quick_match(gt, preds, "p.jpg")}
    assert cats["header"]["pred_idx"] == [0] and cats["text_block"]["pred_idx"] == [1]


def test_tables_are_assigned_by_hungarian_on_normalised_html():
    gt = [{"category_type": "table", "html": "<table><tr><td>1</td><td>2</td></tr></table>", "order": 1},
          {"category_type": "table", "html": "<table><tr><td>apple</td></tr></table>", "order": 2}]
    preds = [{"category_type": "html_table", "position": [0, 10], "content": "<table><tr><td>apple</td></tr></table>"},
             {"category_type": "html_table", "position": [20, 30],
              "content": "<table><tr><td>1</td><td>2</td></tr></table>"}]
    records = match_tables(gt, preds, "p.jpg")
    assert [r["pred_idx"] for r in records] == [[1], [0]]
    assert [r["edit"] for r in records] == [0, 0]
    # As published, prediction 0 carries no position and so never enters the reading order.
    assert records[1]["pred_position"] == ""


# --- TEDS ----------------------------------------------------------------------------------------

def _wrap(rows: str) -> str:
    return f'<html><body><table border="1" >{rows}</table></body></html>'


def test_teds_identical_and_empty():
    t = _wrap("<tr><td>a</td><td>b</td></tr>")
    assert teds(t, t) == 1.0
    assert teds("", t) == 0.0 and teds(t, "<p>no table</p>") == 0.0


def test_teds_cell_content_vs_structure_only():
    gt = _wrap("<tr><td>abcd</td><td>b</td></tr>")
    pred = _wrap("<tr><td>abXd</td><td>b</td></tr>")
    # Nodes below the table: tr, td, td = 3; one cell rename costs its token edit distance 1/4.
    assert teds(pred, gt) == pytest.approx(1 - 0.25 / 3)
    assert teds(pred, gt, structure_only=True) == 1.0


def test_teds_spans_count_as_structure():
    gt = _wrap('<tr><td colspan="2">h</td></tr><tr><td>1</td><td>2</td></tr>')
    pred = _wrap("<tr><td>h</td><td></td></tr><tr><td>1</td><td>2</td></tr>")
    # pred has 6 nodes (2 tr + 4 td), GT 5: rename the spanning cell (1) + insert one cell (1).
    assert teds(pred, gt, structure_only=True) == pytest.approx(1 - 2 / 6)
    rowspan = _wrap('<tr><td rowspan="2">x</td><td>1</td></tr><tr><td>2</td></tr>')
    assert teds(rowspan, rowspan) == 1.0
    assert teds(gt, rowspan, structure_only=True) < 1.0


# --- metrics -------------------------------------------------------------------------------------

def test_edit_distance_is_page_weighted():
    samples = [{"img_id": "a", "gt": "abcd", "pred": "abcd", "norm_gt": "abcd", "norm_pred": "abcd"},
               {"img_id": "a", "gt": "xy", "pred": "", "norm_gt": "xy", "norm_pred": ""},
               {"img_id": "b", "gt": "abcd", "pred": "abcf", "norm_gt": "abcd", "norm_pred": "abcf"}]
    s = edit_distance(samples)
    assert s.per_page == {"a": pytest.approx(2 / 6), "b": pytest.approx(1 / 4)}
    assert s.page_avg == pytest.approx((2 / 6 + 1 / 4) / 2)
    assert s.whole == pytest.approx(3 / 10)
    assert ned("kitten", "sitting") == pytest.approx(3 / 7)


def test_table_pages_without_a_match_count_as_zero():
    t = "<table><tr><td>1</td></tr></table>"
    samples = [{"img_id": "a", "gt": t, "pred": t, "gt_idx": [0]}]
    s = table_scores(samples, {"a", "b"})
    assert s.per_page_teds == {"a": 1.0, "b": 0.0} and s.page_teds == 0.5 and s.teds == 1.0


def test_reading_order_uses_prediction_offsets():
    records = [{"gt_position": [1], "pred_position": 50}, {"gt_position": [2], "pred_position": 10},
               {"gt_position": [3], "pred_position": ""}]
    r = reading_order(records, "p.jpg")
    assert r["gt"] == [1, 2, 3] and r["pred"] == [2, 1]
    assert r["edit"] == pytest.approx(2 / 3)


def test_truncated_blocks_are_merged_and_ignored_blocks_dropped():
    page = {"layout_dets": [_gt("text_block", "first half ", 1), _gt("text_block", "second half", 2),
                            {**_gt("text_block", "skip me", 3), "ignore": True}],
            "extra": {"relation": [{"source_anno_id": 1, "target_anno_id": 2, "relation_type": "truncated"}]}}
    blocks = gt_elements(page)["text_block"]
    assert [b["text"] for b in blocks] == ["first half second half"]


def test_missing_prediction_scores_every_block_as_missed():
    page = {"layout_dets": [_gt("text_block", "Some body text", 1),
                            {"category_type": "table", "html": "<table><tr><td>1</td></tr></table>", "order": 2,
                             "anno_id": 9}],
            "page_info": {"image_path": "p.jpg"}, "extra": {"relation": []}}
    s = score_page(page, "")
    assert [r["edit"] for r in s.text] == [1] and s.text[0]["pred"] == ""
    assert len(s.table) == 1 and s.table[0]["pred"] == ""
    assert s.reading_order["pred"] == [] and s.reading_order["edit"] == 1.0


# --- display formulas (expected rows cross-checked against the published v1.6 scorer) ------------

def _formula_case(gts, preds):
    from minuscule.bench.omnidoc.formula_match import match_display_formulas

    gt = [{"category_type": "equation_isolated", "latex": latex, "order": order, "anno_id": order}
          for latex, order in gts]
    pool, pos = [], 0
    for p in preds:
        pool.append({"category_type": "equation_isolated", "position": [pos, pos + len(p)], "content": p})
        pos += len(p) + 2
    return [(r["gt_idx"], r["pred_idx"], r["pred"], round(float(r["edit"]), 4))
            for r in match_display_formulas(gt, pool, [], "p.jpg")]


def test_formula_pieces_are_merged_for_one_gt():
    rows = _formula_case([("$$a=b+c$$", 1)], [r"\[a=b\]", r"\[+c\]"])
    assert rows == [([0], [0, 1], r"\begin{array}{l} {a=b} \\ {+c} \end{array}", 0.1667)]


def test_aligned_prediction_rows_match_separate_gt_formulas():
    rows = _formula_case([("$$x=1$$", 1), ("$$y=2$$", 2)], [r"\[\begin{aligned} x &= 1 \\ y &= 2 \end{aligned}\]"])
    assert rows == [([0], [0], r"\[x &= 1\]", 0.0), ([1], [1], r"\[y &= 2\]", 0.0)]


def test_missing_formula_prediction_is_a_full_miss():
    assert _formula_case([("$$e=mc^2$$", 1)], []) == [([0], [""], "", 1.0)]


def test_logic_cases_become_a_braced_array():
    from minuscule.bench.omnidoc.formula_lines import logic_brace_formula

    assert logic_brace_formula(r"\begin{cases} a>0 \\ b \Rightarrow c \end{cases}") == \
        r"\left\{ \begin{array}{l} a>0 \\ b \Rightarrow c \end{array} \right."
    plain = r"\begin{cases} 1 & x>0 \\ 0 & x\le 0 \end{cases}"
    assert logic_brace_formula(plain) == plain


def test_malformed_table_spans_score_zero_like_the_published_scorer():
    bad = '<table><tr><td colspan="$2$">a</td></tr></table>'
    s = table_scores([{"img_id": "a", "gt": "<table><tr><td>a</td></tr></table>", "pred": bad, "gt_idx": [0]}], {"a"})
    assert s.teds == 0.0 and s.teds_s == 0.0
