"""Table grids: spans, neighbours, headings, malformed HTML, pipe tables."""

from minuscule.markup import CellSpec, all_tables, build_grid, html_tables, markdown_tables, parse_html


def cell(grid, text):
    return next(pos for pos, t in grid.cells.items() if t == text)


def texts(grid, positions):
    return sorted(grid.cells[p] for p in positions)


SPANNED = """
<table>
 <thead><tr><th>Region</th><th colspan="2">Sales</th></tr></thead>
 <tr><td rowspan="2">North</td><td>10</td><td>11</td></tr>
 <tr><td>20</td><td>21</td></tr>
 <tr><td>South</td><td colspan="2">30</td></tr>
</table>"""


def test_spans_place_cells_by_top_left():
    (g,) = html_tables(SPANNED)
    assert g.dense() == [
        ["Region", "Sales", "Sales"],
        ["North", "10", "11"],
        ["North", "20", "21"],
        ["South", "30", "30"],
    ]
    assert g.spans[cell(g, "North")] == (2, 1)
    assert g.spans[cell(g, "Sales")] == (1, 2)
    assert g.is_rectangular and g.n_rows == 4 and g.n_cols == 3


def test_spanned_cells_have_several_neighbours():
    (g,) = html_tables(SPANNED)
    assert texts(g, g.right[cell(g, "North")]) == ["10", "20"]
    assert texts(g, g.down[cell(g, "Sales")]) == ["10", "11"]
    assert texts(g, g.up[cell(g, "30")]) == ["20", "21"]
    assert texts(g, g.left[cell(g, "20")]) == ["North"]
    assert g.up[cell(g, "Region")] == frozenset()


def test_headings_from_th_and_thead():
    (g,) = html_tables(SPANNED)
    assert texts(g, g.top_headings(cell(g, "21"))) == ["Sales"]
    # No heading to the left: the walk's end cells are returned instead.
    assert texts(g, g.left_headings(cell(g, "21"))) == ["North"]
    (g2,) = html_tables("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>")
    assert texts(g2, g2.top_headings(cell(g2, "d"))) == ["b"]
    assert g2.top_headings(cell(g2, "b")) == frozenset()  # the start cell itself never counts


def test_thead_marks_td_cells_as_headings():
    (g,) = html_tables("<table><thead><tr><td>H</td></tr></thead><tbody><tr><td>v</td></tr></tbody></table>")
    assert cell(g, "H") in g.headings and cell(g, "v") not in g.headings


def test_bad_and_zero_spans():
    (g,) = html_tables('<table><tr><td rowspan="x">a</td><td colspan="-2">b</td><td rowspan="0">c</td></tr>'
                       "<tr><td>d</td><td>e</td></tr><tr><td>f</td><td>g</td></tr></table>")
    assert g.spans[cell(g, "a")] == (1, 1) and g.spans[cell(g, "b")] == (1, 1)
    assert g.spans[cell(g, "c")] == (3, 1)  # rowspan=0 reaches the last row
    assert g.dense()[2] == ["f", "g", "c"]


def test_row_span_past_the_end_adds_rows():
    (g,) = html_tables('<table><tr><td rowspan="3">a</td><td>b</td></tr></table>')
    assert g.dense() == [["a", "b"], ["a", None], ["a", None]]
    assert not g.is_rectangular


def test_unclosed_cells_nest_like_html_parser():
    # html.parser-style trees never close <td> implicitly: the second cell nests in the first.
    (g,) = html_tables("<table><tr><td>a<td>b</tr><tr><td>c</td><td>d</td></tr></table>")
    assert g.dense()[0] == ["ab", None]
    assert g.dense()[1] == ["c", "d"]


def test_stray_end_tags_and_br():
    (g,) = html_tables("<table></span><tr><td>x<br>y</td></div><td>z<br/>w</td></tr></table>")
    assert g.dense() == [["x\ny", "z\nw"]]


def test_void_elements_and_their_redundant_end_tags():
    root = parse_html("<p>a<br>b<br/>c</br>d<img src=x></img>e</p>f")
    assert root.text() == "a\nb\ncdef"
    (p,) = root.iter({"p"})
    assert p.text() == "a\nb\ncde" and root.children[-1].data == "f"


def test_text_in_scripts_and_comments_is_ignored():
    (g,) = html_tables("<table><tr><td>v<script>var x;</script><!-- note --><style>p{}</style></td></tr></table>")
    assert g.cells[(0, 0)] == "v"


def test_nested_tables_are_separate_and_their_rows_count_in_the_outer_one():
    tables = html_tables("<table><tr><td>o<table><tr><td>i</td></tr></table></td></tr></table>")
    assert len(tables) == 2
    assert tables[0].dense() == [["oi"], ["i"]]
    assert tables[1].dense() == [["i"]]


def test_uppercase_tags_and_no_tables():
    assert html_tables("<TABLE><TR><TD>a</TD></TR></TABLE>")[0].cells == {(0, 0): "a"}
    assert html_tables("no tables < here >") == []
    assert html_tables("<table></table>") == []


def test_pipe_table_with_separator():
    (g,) = markdown_tables("intro\n\n| Name | Score |\n|:---|---:|\n| Ann | 1 |\n| Bob | 2 |\n\nafter")
    assert g.dense() == [["Name", "Score"], ["Ann", "1"], ["Bob", "2"]]
    # Markdown headings: first row and first column.
    assert cell(g, "Name") in g.headings and cell(g, "Bob") in g.headings and cell(g, "2") not in g.headings
    assert texts(g, g.top_headings(cell(g, "2"))) == ["Score"]
    assert texts(g, g.left_headings(cell(g, "2"))) == ["Bob"]


def test_pipe_table_without_outer_pipes_or_separator():
    (g,) = markdown_tables("a | b\nc | d")
    assert g.dense() == [["a", "b"], ["c", "d"]]


def test_single_pipe_line_is_not_a_table_and_runs_split_tables():
    assert markdown_tables("just | one line") == []
    tables = markdown_tables("|a|b|\n|c|d|\n\n|e|f|\n|g|h|")
    assert [t.dense() for t in tables] == [[["a", "b"], ["c", "d"]], [["e", "f"], ["g", "h"]]]


def test_ragged_pipe_rows_leave_holes():
    (g,) = markdown_tables("|a|b|c|\n|-|-|-|\n|d|\n")
    assert g.dense() == [["a", "b", "c"], ["d", None, None]]
    assert g.right[cell(g, "d")] == frozenset()


def test_all_tables_orders_markdown_first_and_can_skip_it():
    text = "<table><tr><td>h</td></tr></table>\n\n|m|n|\n|-|-|\n|o|p|"
    assert [t.source for t in all_tables(text)] == ["markdown", "html"]
    assert [t.source for t in all_tables(text, markdown=False)] == ["html"]


def test_build_grid_later_cell_wins_overlap():
    rows = [[CellSpec("x"), CellSpec("y", rowspan=3)], [CellSpec("z", colspan=2)]]
    g = build_grid(rows)
    assert g.dense() == [["x", "y"], ["z", "z"]]
    assert build_grid([]) is None and build_grid([[]]) is None
