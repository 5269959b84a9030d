"""Line-end hyphens: compounds keep theirs, hyphenation breaks lose theirs."""

from __future__ import annotations

import pytest

from minuscule.documents.pdf import SOFT_HYPHEN
from minuscule.lite.blocks import join_lines
from minuscule.lite.hyphens import keep_hyphen

pytest.importorskip("spellchecker")


@pytest.mark.parametrize("before,after", [("task", "force"), ("Help", "desk"), ("Even", "keeled"),
                                          ("client", "server"), ("Contextually", "based")])
def test_compounds_keep_the_hyphen(before, after):
    assert keep_hyphen(before, after)
    assert join_lines([f"a {before}-", f"{after} b"]) == f"a {before}-{after} b"


@pytest.mark.parametrize("before,after,joined", [("sta", "tion", "station"), ("infor", "mation", "information"),
                                                 ("in", "formation", "information"), ("under", "stand", "understand"),
                                                 ("some", "thing", "something"), ("improve", "ment", "improvement")])
def test_breaks_join_the_word(before, after, joined):
    assert not keep_hyphen(before, after)
    assert join_lines([f"a {before}{SOFT_HYPHEN}", f"{after} b"]) == f"a {joined} b"


def test_capital_after_the_break_keeps_the_hyphen_and_a_range_stays_whole():
    assert join_lines(["well-", "Known"]) == "well-Known"
    assert join_lines(["pages 12-", "15 and"]) == "pages 12-15 and"
