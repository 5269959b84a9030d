"""Formula extraction: delimiters, their precedence, positions."""

from minuscule.markup import extract_math, find_formulas


def test_order_of_kinds_and_stripping():
    text = r"a $x$ b $$ y $$ c \(z\) d \[ w \]"
    assert extract_math(text) == ["z", "w", "y", "x"]


def test_ignore_dollars():
    assert extract_math(r"$x$ and \(y\)", dollars=False) == ["y"]


def test_multiline_and_non_greedy():
    assert extract_math("$$a\n+b$$ and $$c$$") == ["a\n+b", "c"]


def test_removed_kinds_do_not_leak_into_later_ones():
    # The $ inside \( \) is gone before dollar spans are looked for.
    assert extract_math(r"\(a$\) b $c$") == ["a$", "c"]


def test_find_formulas_positions_and_display_flags():
    text = r"x $a$ y $$b$$ z \[c\] w \(d\)"
    got = find_formulas(text)
    assert [(f.latex, f.display) for f in got] == [("a", False), ("b", True), ("c", True), ("d", False)]
    for f in got:
        assert f.latex in text[f.start : f.end]
    assert find_formulas("$$ $$") == []
