"""normalize_text and the small text measures used by the checks."""

from minuscule.markup import alnum_count, normalize_text, trailing_repeats


def test_br_and_html_emphasis_removed():
    assert normalize_text("a<br>b<br/>c") == "a b c"
    assert normalize_text("<b>bold</b> and <i>it</i>") == "bold and it"


def test_markdown_emphasis_pairs_removed_within_a_line_only():
    assert normalize_text("**bold** __also__ *it* _em_") == "bold also it em"
    # Pairs do not span lines, so markers split by a newline stay ...
    assert normalize_text("*start\nend*") == "*start end*"
    # ... while `**` on its own reads as an empty `*…*` pair and goes.
    assert normalize_text("**start\n\nend**") == "start end"
    # Underscores inside words pair up too (the scorer's quirk, kept on purpose).
    assert normalize_text("a_b_c") == "abc"


def test_whitespace_collapsed_and_unicode_folded():
    assert normalize_text("a \t\n  b") == "a b"
    assert normalize_text("e\u0301") == "\u00e9"  # NFC
    assert normalize_text("\u2018q\u2019 \u201cd\u201d \u2013 \u2014 \u2212 \u00b5 \uff3f") == "'q' \"d\" - - - \u03bc _"


def test_case_is_kept():
    assert normalize_text("MiXeD") == "MiXeD"


def test_alnum_count():
    assert alnum_count("a1 -- é!") == 3


def test_alnum_count_agrees_with_isalnum_on_every_code_point():
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert [alnum_count(c) for c in chars] == [int(c.isalnum()) for c in chars]
    assert alnum_count("   \n") == 0


def test_trailing_repeats():
    assert trailing_repeats("", 3) == [0, 0, 0]
    assert trailing_repeats("abab", 3) == [1, 2, 1]
    assert trailing_repeats("aabaabaa", 3) == [2, 1, 2]
    assert trailing_repeats("abc", 5) == [1, 1, 1, 0, 0]
    assert trailing_repeats("a" * 100, 5) == [100, 50, 33, 25, 20]
    # Whitespace runs count as one space.
    assert trailing_repeats("x -\n\n-\t-", 2) == [1, 3]
