"""The lite engine on born-digital PDFs made here: columns, tables, headers/footers, hyphens, lists."""

from __future__ import annotations

import re

from pdfmaker import PageSpec, make_pdf, ruled_table

from minuscule.documents import load
from minuscule.lite.engine import LiteEngine

LEFT = ["Rivers carry nitrate from the fields", "into the sea during the wet months", "of the year when soils are bare."]
LEFT2 = ["Groundwater feeds the summer flow", "and dilutes the water of the brook", "at every gauging station we kept."]
RIGHT = ["Samples were taken every two weeks", "at nine stations along the river", "and analysed within two days."]
RIGHT2 = ["Loads peaked in the late winter", "when wet soils met bare fields", "across the whole catchment area."]


def parse(pdf: bytes, tmp_path, name="doc.pdf"):
    path = tmp_path / name
    path.write_bytes(pdf)
    return list(LiteEngine().parse_pages(load(path)))


def two_columns() -> PageSpec:
    s = PageSpec()
    s.text(60, 70, "Nitrate in Small Rivers", 20, bold=True)
    y = s.paragraph(60, 120, LEFT)
    s.paragraph(60, y + 12, LEFT2)  # the paragraph gaps of both columns line up on purpose
    y = s.paragraph(320, 120, RIGHT)
    s.paragraph(320, y + 12, RIGHT2)
    s.paragraph(60, 330, ["A closing paragraph runs across the full width of the page below both columns here."])
    return s


def test_two_columns_are_read_one_after_the_other(tmp_path):
    md = parse(make_pdf([two_columns()]), tmp_path)[0].markdown
    order = ["# Nitrate in Small Rivers", LEFT[0], LEFT2[-1], RIGHT[0], RIGHT2[-1], "A closing paragraph"]
    positions = [md.find(s) for s in order]
    assert -1 not in positions, md
    assert positions == sorted(positions), md


def test_three_columns(tmp_path):
    s = PageSpec()
    cols = [[f"column {c} line {i} with some words" for i in range(6)] for c in range(3)]
    for c, lines in enumerate(cols):
        s.paragraph(40 + c * 180, 100, lines, size=8)
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    positions = [md.find(f"column {c} line {i}") for c in range(3) for i in range(6)]
    assert positions == sorted(positions) and -1 not in positions, md


def test_ruled_table_becomes_html_with_spans(tmp_path):
    s = PageSpec()
    s.paragraph(60, 80, ["The table below lists the stations."])
    rows = [["Station", "Area", "Flow", "Nitrate"],
            ["K1 Weiden", "12.4", "0.18", "31.2"],
            ["K3 Hollbach", "38.9", "", "27.5"],
            ["K5 Marten", "74.2", "1.07", "22.8"]]
    ruled_table(s, 60, 120, [140, 100, 100, 100], rows, spans={(2, 2): (2, 1), (3, 0): (1, 2)})
    result = parse(make_pdf([s]), tmp_path)[0]
    tables = [b for b in result.blocks if b.type == "table"]
    assert len(tables) == 1
    html = tables[0].markdown
    assert html.startswith("<table>") and html.endswith("</table>")
    assert "<tr><th>Station</th><th>Area</th><th>Flow</th><th>Nitrate</th></tr>" in html
    assert "<tr><td>K1 Weiden</td><td>12.4</td><td>0.18</td><td>31.2</td></tr>" in html
    assert '<td rowspan="2"></td>' in html
    assert '<td colspan="2">K5 Marten</td>' in html
    # the cell text is not repeated outside the table
    assert result.markdown.count("K1 Weiden") == 1


def test_running_headers_footers_and_page_numbers_are_left_out(tmp_path):
    pages = []
    for n in range(1, 4):
        s = PageSpec()
        s.text(60, 30, "Journal of Reproducible Tests, Vol. 3", 8)
        s.paragraph(60, 100, [f"Body text of page {n} talks about rivers.", "It has a second line as well."])
        s.text(290, 815, str(n), 8)
        pages.append(s)
    results = parse(make_pdf(pages), tmp_path)
    for n, r in enumerate(results, 1):
        assert "Journal of Reproducible" not in r.markdown
        assert not re.search(rf"(^|\n){n}(\n|$)", r.markdown)
        assert f"Body text of page {n}" in r.markdown
        types = {b.type for b in r.blocks}
        assert {"header", "footer"} <= types


def test_single_page_keeps_a_non_repeating_top_line_but_drops_its_page_number(tmp_path):
    s = PageSpec()
    s.text(60, 30, "Draft for internal review", 8)
    s.paragraph(60, 100, ["The only page of this document.", "Nothing else to say."])
    s.text(290, 815, "- 7 -", 8)
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    assert "Draft for internal review" in md
    assert "7" not in md


def test_hyphenated_line_breaks_are_joined(tmp_path):
    s = PageSpec()
    s.paragraph(60, 100, ["The measurements were taken at every sta-", "tion along the river by the well-",
                          "Known team of hydrologists."])
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    assert "every station along" in md
    assert "well-Known" in md  # a capital after the hyphen: the hyphen was meant


def test_headings_and_lists(tmp_path):
    s = PageSpec()
    s.text(60, 60, "Main Title of the Report", 22, bold=True)
    s.text(60, 100, "1. Introduction", 14, bold=True)
    s.paragraph(60, 125, ["Plain text under the first heading."])
    s.paragraph(60, 160, ["• first point of the list", "• second point of the list", "1) a numbered item"])
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    assert "# Main Title of the Report" in md
    assert re.search(r"^##+ 1\. Introduction$", md, re.M)
    assert "- first point of the list\n- second point of the list\n1) a numbered item" in md


def test_json_blocks_have_types_and_pixel_boxes(tmp_path):
    result = parse(make_pdf([two_columns()]), tmp_path)[0]
    data = result.to_json()
    assert data["page"] == 1 and data["engine"] == "lite"
    for b in data["blocks"]:
        x0, y0, x1, y1 = b["bbox"]
        assert 0 <= x0 < x1 <= 1600 and 0 <= y0 < y1 <= 1600
    assert data["blocks"][0]["type"] == "title"


def test_borderless_table_from_aligned_rows(tmp_path):
    s = PageSpec()
    s.paragraph(60, 80, ["Maintenance intervals are listed below for every unit we run."])
    rows = [("Item", "Interval", "Limit", "Owner"), ("Motor insulation test", "6 months", "> 100 MOhm", "Electrical"),
            ("Impeller clearance", "4,000 h", "0.3 - 0.5 mm", "Mechanical"), ("Valve exercise", "3 months", "full stroke", "Operations")]
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            s.text(60 + c * 120, 120 + r * 16, text, 9, bold=r == 0)
    s.paragraph(60, 200, ["After the table the text goes on as usual, in one column."])
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    assert "<tr><th>Item</th><th>Interval</th><th>Limit</th><th>Owner</th></tr>" in md
    assert "<tr><td>Impeller clearance</td><td>4,000 h</td><td>0.3 - 0.5 mm</td><td>Mechanical</td></tr>" in md
    assert md.index("Maintenance intervals") < md.index("<table>") < md.index("After the table")


def test_bullets_set_apart_are_a_list_not_a_table(tmp_path):
    s = PageSpec()
    for i, text in enumerate(["first point of the list", "second point of the list", "third point of the list"]):
        s.text(60, 100 + i * 14, "•", 10)
        s.text(80, 100 + i * 14, text, 10)
    md = parse(make_pdf([s]), tmp_path)[0].markdown
    assert "<table>" not in md
    assert "- first point of the list\n- second point of the list\n- third point of the list" in md
