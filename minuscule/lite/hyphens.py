"""Whether a hyphen at a line end is part of the word ("task-force") or only marks a break ("sta-tion")."""

from __future__ import annotations

import functools
import re

_TAIL = re.compile(r"([A-Za-z]+)$")
_HEAD = re.compile(r"^([A-Za-z]+)")
# A compound is kept when the joined word is this much rarer than its rarer half: "taskforce" is 150x
# rarer than "task", "information" is 26x commoner than "formation".
RARITY = 0.01


@functools.lru_cache(maxsize=1)
def _frequencies():
    """English word counts from pyspellchecker's bundled list (lite extra); None when it is missing."""
    try:
        from spellchecker import SpellChecker
    except ImportError:
        return None
    return SpellChecker(language="en", distance=1).word_frequency


def keep_hyphen(before: str, after: str) -> bool:
    """True when `before` ends in a word and `after` starts with one that together form a hyphenated
    compound, judged by word frequencies: both halves are words and the joined form is rare. Without
    the word list every line-end hyphen is taken as a break, as layout engines mostly insert them."""
    left, right = _TAIL.search(before), _HEAD.search(after)
    freq = _frequencies()
    if freq is None or left is None or right is None:
        return False
    a, b = left.group(1).lower(), right.group(1).lower()
    fa, fb = freq[a] if a in freq else 0, freq[b] if b in freq else 0
    if min(fa, fb) == 0:
        return False
    joined = a + b
    return (freq[joined] if joined in freq else 0) < RARITY * min(fa, fb)
