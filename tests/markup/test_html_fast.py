"""The regex fast path of parse_html builds the same tree as the stdlib tokenizer, or steps aside."""

from __future__ import annotations

import random

import pytest

from minuscule.markup import html as H


def tree(node):
    """Names, attributes and text of a tree, adjacent text runs merged (the tokenizers chunk data alike
    but not identically)."""
    if isinstance(node, H.Text):
        return ("#text", node.data, node.hidden)
    kids: list = []
    for child in map(tree, node.children):
        if child[0] == "#text" and kids and kids[-1][0] == "#text" and kids[-1][2] == child[2]:
            kids[-1] = ("#text", kids[-1][1] + child[1], child[2])
        else:
            kids.append(child)
    return (node.name, tuple(sorted(node.attrs.items())), tuple(kids))


def stdlib_tree(markup: str):
    builder = H._TreeBuilder()
    builder.feed(markup)
    builder.close()
    return tree(builder.root)


CASES = [
    '<table><tr><td>a</td><td rowspan="2">b</td></tr></table>',
    "<td>x<td>y</tr>",  # unclosed cells swallow the next one
    "</td></tr>",  # stray end tags close nothing
    '<TD ROWSPAN="3">x</TD>',
    "<br>a<br>",
    '<table><tr><th colspan="2" >h</th>',
    "<p>x</p></p></div>",
    "Text with $x^2$ and <b>bold</b> before\n<table>\n<tr><td>1</td></tr>\n</table>\nafter",
    "$a < b$ and $$\\begin{matrix} 1 & 2 \\end{matrix}$$ <td>x & y</td>",  # "<" and "&" that start nothing
    "a <",
    "<<td>x",
]
FALLBACK = ["<td>1&lt;2</td>", "&#60;", "<é>", "<br/>", "<!-- c --><td>x</td>", "<script>1<2</script>", "<td class=x>y</td>",
            "<img src='a'>"]


@pytest.mark.parametrize("markup", CASES)
def test_plain_markup_takes_the_fast_path_and_builds_the_same_tree(markup):
    assert H._fast_feed(H._TreeBuilder(), markup)
    assert tree(H.parse_html(markup)) == stdlib_tree(markup)


@pytest.mark.parametrize("markup", FALLBACK)
def test_anything_else_goes_to_the_stdlib_tokenizer(markup):
    assert "&" in markup or not H._fast_feed(H._TreeBuilder(), markup)
    assert tree(H.parse_html(markup)) == stdlib_tree(markup)


def test_random_malformed_tables_agree():
    rng = random.Random(7)
    tags = ["<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "</th>", '<td colspan="2">',
            '<td rowspan="3">', "<thead>", "</thead>", "<tbody>", "</tbody>", "<br>", "<b>", "</b>", "x", "y z", "\n",
            " < ", "<", " & ", "&"]
    for _ in range(300):
        markup = "".join(rng.choice(tags) for _ in range(rng.randrange(1, 40)))
        assert tree(H.parse_html(markup)) == stdlib_tree(markup), markup
