"""Builders of text-layer chars for the lite tests: one Char per letter at a fixed advance."""

from __future__ import annotations

from minuscule.documents.types import Char


def letter_chars(text: str, x: float, y0: float, size: float, adv: float, bold: bool = False) -> list[Char]:
    """Chars of `text` from x; a space advances too and sets space_before on the next letter."""
    out, space = [], False
    for ch in text:
        if ch == " ":
            x, space = x + adv, True
            continue
        out.append(Char(ch, (x, y0, x + adv, y0 + size), size, bold=bold, space_before=space))
        x, space = x + adv, False
    return out
