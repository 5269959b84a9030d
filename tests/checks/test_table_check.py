"""table: cell lookup, every relation, thresholds, Markdown vs HTML, spans."""

from minuscule.checks import parse_test

BASE = {"pdf": "p.pdf", "page": 1, "id": "t"}

HTML = """Some text
<table>
<tr><th>Model</th><th colspan="2">Score</th></tr>
<tr><th>Year</th><th>2023</th><th>2024</th></tr>
<tr><td rowspan="2">GPT</td><td>0.81</td><td>0.87</td></tr>
<tr><td>0.79</td><td>0.90</td></tr>
</table>"""

MD = """| Name | Score |
|---|---|
| Ann | 1.5 |
| Bob | 2.5 |"""


def table(cell, **kw):
    return parse_test({**BASE, "type": "table", "cell": cell, **kw})


def test_cell_only_and_missing():
    assert table("0.87").run(HTML).passed
    r = table("0.99").run(HTML)
    assert not r.passed and "no cell matching" in r.explanation
    r = table("x").run("no tables here")
    assert not r.passed and r.explanation == "no tables found"


def test_direct_relations_with_spans():
    assert table("0.87", up="2024", left="0.81", down="0.90").run(HTML).passed
    assert table("GPT", right="0.79").run(HTML).passed  # a row-spanned cell sees both rows
    assert table("0.79", left="GPT").run(HTML).passed
    assert table("2023", up="Score").run(HTML).passed and table("2024", up="Score").run(HTML).passed
    r = table("0.87", right="0.81").run(HTML)
    assert not r.passed and "right" in r.explanation


def test_heading_relations():
    assert table("0.90", top_heading="2024").run(HTML).passed
    assert table("0.90", top_heading="Score").run(HTML).passed  # every heading met on the way up
    assert not table("0.90", left_heading="Year").run(HTML).passed
    assert table("0.90", left_heading="GPT").run(HTML).passed  # no heading to the left: the walk's end


def test_thresholds_use_full_ratio_and_max_diffs():
    assert not table("0.8").run(HTML).passed  # full ratio, not substring
    assert table("0.8", max_diffs=1).run(HTML).passed
    # Floor of 0.5 similarity even with a huge budget.
    assert not table("zzzz", max_diffs=100).run(HTML).passed
    assert table("0.87", up="2O24", max_diffs=1).run(HTML).passed


def test_case_sensitive_and_normalised():
    assert not table("gpt").run(HTML).passed
    assert table("Ann", right="1.5").run(MD.replace("Ann", "**Ann**")).passed


def test_markdown_tables_and_ignore_flag():
    assert table("2.5", up="1.5", left="Bob", top_heading="Score", left_heading="Bob").run(MD).passed
    assert not table("2.5", left_heading="Ann").run(MD).passed
    assert table("2.5", up="1.5", left="Bob", top_heading="Score").run(MD).passed
    assert table("1.5", left_heading="Ann").run(MD).passed  # first column counts as headings
    assert not table("1.5", ignore_markdown_tables=True).run(MD).passed


def test_any_table_on_the_page_may_pass():
    page = MD + "\n\n" + HTML
    assert table("Ann").run(page).passed and table("GPT").run(page).passed


def test_overlapping_spans_fail_like_the_published_parser():
    bad = '<table><tr><td>x</td><td rowspan="3">y</td></tr><tr><td colspan="2">z</td></tr></table>'
    r = table("x").run(bad + "\n" + MD.replace("Ann", "x"))
    assert not r.passed and "spans" in r.explanation


def test_explanations_name_the_missing_relation():
    r = table("Model", up="x").run(HTML)
    assert not r.passed and "no up cell" in r.explanation
    r = table("0.81", left="zzz").run(HTML)
    assert "left is 'GPT'" not in r.explanation and "left expected 'zzz'" in r.explanation
