"""Text normalisation used by the olmOCR-Bench checks (same steps, in the same order, as the published scorer)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_BR = re.compile(r"<br/?>")
_BOLD_STARS = re.compile(r"\*\*(.*?)\*\*")
_BOLD_UNDERSCORES = re.compile(r"__(.*?)__")
_HTML_B = re.compile(r"</?b>")
_HTML_I = re.compile(r"</?i>")
_PAIRED_DOUBLE = re.compile(r"(\*\*|__)(.*?)\1")
_PAIRED_SINGLE = re.compile(r"(\*|_)(.*?)\1")
_SPACES = re.compile(r"\s+")

# Typographic variants that OCR systems emit interchangeably, folded to one form.
_CHAR_MAP = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\uff3f": "_",
        "\u2013": "-",
        "\u2014": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2212": "-",
        "\u00b5": "\u03bc",
    }
)


def collapse_spaces(text: str) -> str:
    r"""`re.sub(r"\s+", " ", text)`: str.split() and re's \s agree on every code point (tested),
    and splitting and joining in C beats a regex replacement per word several times over."""
    words = text.split()
    if not words:
        return " " if text else ""
    out = " ".join(words)
    if text[0].isspace():
        out = " " + out
    if text[-1].isspace():
        out += " "
    return out


def normalize_text(text: str) -> str:
    """Drop emphasis markers and <br>, collapse whitespace, NFC, fold quotes/dashes/micro.

    Emphasis pairs are matched within a line only (the regexes' `.` does not cross newlines),
    which also turns `a_b_c` into `abc`; the scorer does the same, so we keep it.
    """
    # Every marker step needs a '<', '*' or '_'; most table cells and test strings have none, and
    # NFC and the fold leave ASCII alone, so those texts take the single whitespace pass.
    if "<" not in text and "*" not in text and "_" not in text:
        text = collapse_spaces(text)
        return text if text.isascii() else _fold(unicodedata.normalize("NFC", text))
    # Each step runs only when its marker is there (the regex scan costs more than the test).
    # Removing tags can bring markers together ("*<b>*"), so each test reads the current text.
    if "<" in text:
        text = _BR.sub(" ", text)
    if "**" in text or "__" in text:
        text = _BOLD_STARS.sub(r"\1", text)
        text = _BOLD_UNDERSCORES.sub(r"\1", text)
    if "<" in text:
        text = _HTML_B.sub("", text)
        text = _HTML_I.sub("", text)
    if "**" in text or "__" in text:
        text = _PAIRED_DOUBLE.sub(r"\2", text)
    if "*" in text or "_" in text:
        text = _PAIRED_SINGLE.sub(r"\2", text)
    text = collapse_spaces(text)
    return _fold(unicodedata.normalize("NFC", text))


# str.translate with a dict looks up every character in Python objects; a page rarely holds one
# of the folded characters, and the class search that proves it runs in C.
_FOLDED = re.compile("[" + "".join(chr(c) for c in _CHAR_MAP) + "]")


def _fold(text: str) -> str:
    return text.translate(_CHAR_MAP) if _FOLDED.search(text) else text


@lru_cache(maxsize=256)
def normalize_cached(text: str) -> str:
    """normalize_text for page texts that many tests read (one page carries dozens of tests)."""
    return normalize_text(text)


# CPython's re treats a char as \w exactly when str.isalnum() holds or it is "_"; deleting the rest in
# C is several times faster than testing each char in Python (scoring calls this for every test).
_NOT_ALNUM = re.compile(r"[\W_]+")


_ALNUM = re.compile(r"[^\W_]")


def has_alnum(text: str) -> bool:
    """Whether some character has str.isalnum() (alnum_count(text) > 0, stopping at the first)."""
    return _ALNUM.search(text) is not None


def alnum_count(text: str) -> int:
    """Number of characters for which str.isalnum() holds."""
    return len(_NOT_ALNUM.sub("", text))


def trailing_repeats(text: str, max_ngram: int = 5) -> list[int]:
    """For n = 1..max_ngram: how many times the text's last n characters repeat back to back at its end.

    Whitespace runs count as one space. Entry n-1 is 0 when the text is shorter than n.
    """
    counts = [0] * max_ngram
    if not text:
        return counts
    # Collapsing whitespace in the whole page costs more than the rest; read a tail, and a longer
    # one only when a run of repeats reaches back to its start. The tail's collapsed text is a
    # suffix of the whole's, so counts that stop inside it are the whole's.
    window = 256
    while len(text) > window:
        flat = collapse_spaces(text[-window:])
        counts = _repeat_counts(flat, max_ngram)
        if all(n * size < len(flat) - 2 * max_ngram for size, n in enumerate(counts, start=1)):
            return counts
        window *= 8
    return _repeat_counts(collapse_spaces(text), max_ngram)


def _repeat_counts(flat: str, max_ngram: int) -> list[int]:
    counts = [0] * max_ngram
    for size in range(1, max_ngram + 1):
        if len(flat) < size:
            continue
        tail = flat[-size:]
        count = 0
        pos = len(flat) - size
        while pos >= 0 and flat[pos : pos + size] == tail:
            count += 1
            pos -= size
        counts[size - 1] = count
    return counts
