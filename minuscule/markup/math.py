"""LaTeX formulas in Markdown: `\\( \\)`, `\\[ \\]`, `$$ $$` and `$ $` delimited spans."""

from __future__ import annotations

import re
from dataclasses import dataclass

_INLINE_PAREN = re.compile(r"\\\((.+?)\\\)", re.DOTALL)
_DISPLAY_BRACKET = re.compile(r"\\\[(.+?)\\\]", re.DOTALL)
_DISPLAY_DOLLARS = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE_DOLLAR = re.compile(r"\$(.+?)\$", re.DOTALL)

# Search order matters: each kind is removed before the next is looked for, so `$$x$$` is not
# read as two empty `$…$` spans and `\( $ \)` does not open a dollar span.
_KINDS = (
    (_INLINE_PAREN, False, True),
    (_DISPLAY_BRACKET, True, True),
    (_DISPLAY_DOLLARS, True, False),
    (_INLINE_DOLLAR, False, False),
)


def extract_math(text: str, dollars: bool = True) -> list[str]:
    """Formula bodies (stripped) in olmOCR-Bench's order: all `\\(…\\)`, then `\\[…\\]`, `$$…$$`, `$…$`.

    With `dollars=False` only the backslash delimiters count.
    """
    found: list[str] = []
    for pattern, _display, backslash in _KINDS:
        if not (backslash or dollars):
            continue
        found.extend(m.strip() for m in pattern.findall(text))
        text = pattern.sub("", text)
    return found


@dataclass(frozen=True)
class Formula:
    """A delimited formula: its LaTeX body, display or inline, and where it sits in the text."""

    latex: str
    display: bool
    start: int
    end: int  # exclusive, delimiters included


def find_formulas(text: str, dollars: bool = True) -> list[Formula]:
    """Formulas with positions, in text order. Same delimiters and precedence as extract_math."""
    masked = text
    found: list[Formula] = []
    for pattern, display, backslash in _KINDS:
        if not (backslash or dollars):
            continue
        for m in pattern.finditer(masked):
            body = m.group(1)
            if "\x00" in body:  # straddles a formula already taken
                continue
            latex = body.strip()
            if latex:
                found.append(Formula(latex, display, m.start(), m.end()))
        # Mask (not delete) what was taken so positions stay those of the original text.
        masked = pattern.sub(lambda m: "\x00" * (m.end() - m.start()), masked)
    return sorted(found, key=lambda f: f.start)
