"""Typed content blocks of a synthetic page: what the generator makes and every later step reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Span:
    """A run of inline content: plain text, inline math, a bold or italic word, or a footnote marker."""

    kind: str  # "text" | "math" | "bold" | "italic" | "sup"
    text: str


Sentence = tuple[Span, ...]


def sentence_is_plain(sentence: Sentence) -> bool:
    """True when a sentence is one text span, so its text appears verbatim in Markdown and PDF."""
    return len(sentence) == 1 and sentence[0].kind == "text"


@dataclass(frozen=True)
class Heading:
    level: int  # 1 = page title, 2 = section, 3 = subsection
    text: str
    kind: str = "heading"


@dataclass(frozen=True)
class Paragraph:
    sentences: tuple[Sentence, ...]
    kind: str = "paragraph"


@dataclass(frozen=True)
class ListBlock:
    ordered: bool
    items: tuple[Sentence, ...]
    kind: str = "list"


@dataclass(frozen=True)
class Cell:
    text: str
    header: bool = False
    rowspan: int = 1
    colspan: int = 1


@dataclass(frozen=True)
class Table:
    rows: tuple[tuple[Cell, ...], ...]
    caption: str  # "" when the table has none
    style: str  # "grid" | "ruled" | "borderless" | "striped"
    n_cols: int
    kind: str = "table"


@dataclass(frozen=True)
class Formula:
    latex: str
    kind: str = "formula"


@dataclass(frozen=True)
class Figure:
    svg: str  # a text-free chart
    caption: str
    width: float  # fraction of the column width
    max_mm: float  # and at most this wide, so a one-column page does not get a page-sized chart
    kind: str = "figure"


@dataclass(frozen=True)
class Footnote:
    number: int
    text: str
    kind: str = "footnote"


Block = Union[Heading, Paragraph, ListBlock, Table, Formula, Figure, Footnote]


def block_has_inline_math(block: Block) -> bool:
    sentences: tuple[Sentence, ...] = ()
    if isinstance(block, Paragraph):
        sentences = block.sentences
    elif isinstance(block, ListBlock):
        sentences = block.items
    return any(span.kind == "math" for s in sentences for span in s)
