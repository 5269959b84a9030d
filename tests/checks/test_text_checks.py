"""present / absent / order: every branch of the published rules."""

import pytest

from minuscule.checks import parse_test

BASE = {"pdf": "p.pdf", "page": 1, "id": "t"}


def present(text, **kw):
    return parse_test({**BASE, "type": "present", "text": text, **kw})


def absent(text, **kw):
    return parse_test({**BASE, "type": "absent", "text": text, **kw})


def order(before, after, **kw):
    return parse_test({**BASE, "type": "order", "before": before, "after": after, **kw})


def test_present_exact_substring_after_normalisation():
    page = "The **quick**\nbrown  fox \u2013 jumps"
    assert present("quick brown fox - jumps").run(page).passed
    assert not present("quick brown cat").run(page).passed


def test_present_threshold_from_max_diffs():
    page = "the quick brown fox"
    # One substitution costs 2 in the Indel-based partial ratio: 1 - 2/(2*10) = 0.9 similarity.
    assert not present("quick bxown", max_diffs=0).run(page).passed
    assert present("quick bxown", max_diffs=1).run(page).passed
    result = present("quick bxown").run(page)
    assert "0.909" in result.explanation and "threshold 1.000" in result.explanation


def test_present_shorter_page_is_aligned_inside_the_reference():
    # partial_ratio aligns the shorter string in the longer: a page that is a piece of the text passes.
    assert present("a long reference sentence here").run("reference").passed


def test_case_handling():
    page = "Hello World"
    assert not present("hello world").run(page).passed
    assert present("hello world", case_sensitive=False).run(page).passed
    assert absent("hello world").run(page).passed
    assert not absent("hello world", case_sensitive=False).run(page).passed


def test_absent_threshold():
    page = "Page 12 of 40 - Confidential"
    assert not absent("Confidential").run(page).passed
    assert absent("Confidental report").run(page).passed
    assert not absent("Confidental", max_diffs=2).run(page).passed
    assert "expected absence" in absent("Confidential").run(page).explanation


@pytest.mark.parametrize(
    "kw, header_found, footer_found",
    [
        ({}, True, True),
        ({"first_n": 20}, True, False),
        ({"last_n": 20}, False, True),
        ({"first_n": 20, "last_n": 20}, True, True),
        ({"first_n": 0}, True, True),  # zero means "not set"
    ],
)
def test_first_n_last_n_windows(kw, header_found, footer_found):
    page = "HEADER TEXT " + "body " * 50 + " FOOTER TEXT"
    assert (not absent("HEADER TEXT", **kw).run(page).passed) == header_found
    assert (not absent("FOOTER TEXT", **kw).run(page).passed) == footer_found


def test_order_exact():
    page = "alpha then beta then gamma"
    assert order("alpha", "beta").run(page).passed
    assert not order("gamma", "beta").run(page).passed
    assert "never appears before" in order("gamma", "beta").run(page).explanation
    # Any before-occurrence ahead of any after-occurrence will do.
    assert order("beta", "alpha").run("alpha beta alpha").passed
    missing = order("delta", "beta").run(page)
    assert not missing.passed and "'before'" in missing.explanation
    missing = order("alpha", "delta").run(page)
    assert not missing.passed and "'after'" in missing.explanation


def test_order_fuzzy_is_levenshtein_and_case_sensitive():
    page = "first paragrahp of text. second paragraph follows."
    assert not order("first paragraph", "second paragraph").run(page).passed
    assert order("first paragraph", "second paragraph", max_diffs=2).run(page).passed
    assert not order("First paragraph", "Second paragraph").run(page.replace("grahp", "graph")).passed


def test_order_normalises_page_and_strings():
    assert order("**bold** start", "end\u2014here").run("bold start ... end-here").passed
