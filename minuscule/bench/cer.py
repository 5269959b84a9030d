"""Character error rate between an engine's Markdown and a known plain text."""

from __future__ import annotations

import html
import re
import unicodedata

from rapidfuzz.distance import Levenshtein

_TAG = re.compile(r"<[^>]+>")
_MD_PREFIX = re.compile(r"^\s*(#{1,6}\s+|[-*+]\s+|>\s*)", re.M)


def plain_text(markdown: str) -> str:
    """Markdown → the words a reader sees: no heading/list markers, no HTML tags, one space between words."""
    text = _MD_PREFIX.sub("", markdown)
    text = html.unescape(_TAG.sub(" ", text)).replace("```", " ")
    return normalize(text)


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def cer(prediction: str, reference: str) -> float:
    """Levenshtein distance over the reference length, both normalised (NFKC, whitespace collapsed)."""
    ref = normalize(reference)
    pred = normalize(prediction)
    if not ref:
        return 0.0 if not pred else 1.0
    return Levenshtein.distance(pred, ref) / len(ref)
