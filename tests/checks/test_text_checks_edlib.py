"""The edlib pre-check of fuzzy order matching never hides a match fuzzysearch would find."""

from __future__ import annotations

import random

import pytest

from minuscule.checks.text import _may_match

fuzzysearch = pytest.importorskip("fuzzysearch")
pytest.importorskip("edlib")


def test_no_match_by_edlib_means_none_by_fuzzysearch():
    rng = random.Random(1)
    alphabet = "abcde fgh"
    skipped = 0
    for _ in range(800):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 160)))
        if text and rng.random() < 0.5:  # a damaged copy of a piece of the text
            i = rng.randrange(len(text))
            needle = list(text[i:i + rng.randrange(4, 20)])
            for _ in range(rng.randrange(0, 4)):
                if needle:
                    needle[rng.randrange(len(needle))] = rng.choice(alphabet)
            needle = "".join(needle) or "abcd"
        else:
            needle = "".join(rng.choice(alphabet) for _ in range(rng.randrange(4, 20)))
        k = rng.randrange(1, max(2, len(needle) // 2))
        found = fuzzysearch.find_near_matches(needle, text, max_l_dist=k)
        if not _may_match(needle, text, k):
            skipped += 1
            assert not found, (needle, text, k)
        if found:
            assert _may_match(needle, text, k)
    assert skipped > 100  # the pre-check does decide often


def test_too_many_distinct_characters_fall_back_to_the_search():
    text = "".join(chr(0x4E00 + i) for i in range(400))
    assert _may_match(text[10:30], text, 2)
