"""Data carriers of the documents layer: Page, TextLayer, Block, PageResult, Document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PIL import Image

BLOCK_TYPES = ("title", "text", "list", "table", "formula", "header", "footer", "caption", "figure", "code")

BBox = tuple[float, float, float, float]  # x0, y0, x1, y1 in page pixels (origin top-left)


@dataclass(frozen=True)
class Char:
    """One character of a PDF text layer, box in page pixels."""

    text: str
    bbox: BBox
    size: float  # font size in pixels
    bold: bool = False
    italic: bool = False
    mono: bool = False
    math: bool = False  # set in a math font (KaTeX, Computer Modern math, STIX/Cambria Math)
    space_before: bool = False  # the text layer has a space or line break before this char
    # OCR letters: space_before is the whole truth, gaps between letter boxes say nothing about spaces.
    exact_spaces: bool = False


@dataclass(frozen=True)
class TextLine:
    """A line of text with its box (from a PDF text layer or an OCR engine)."""

    text: str
    bbox: BBox
    size: float = 0.0  # median glyph height in pixels
    bold: bool = False
    mono: bool = False
    math: bool = False
    score: float = 1.0  # OCR confidence; 1 for a text layer
    chars: tuple[Char, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A ruling line (thin filled rectangle or stroked segment) drawn on a PDF page."""

    bbox: BBox

    @property
    def horizontal(self) -> bool:
        return (self.bbox[2] - self.bbox[0]) >= (self.bbox[3] - self.bbox[1])


@dataclass
class TextLayer:
    """What a PDF page says about its own text: lines with boxes, and drawn rules."""

    lines: list[TextLine]
    rules: list[Rule] = field(default_factory=list)
    # Small filled shapes (list bullets drawn as paths by browsers and word processors).
    marks: list[BBox] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


@dataclass
class Page:
    """One page of a document. The image is rendered on first use (born-digital pages may never need it)."""

    number: int  # 1-based
    width: float  # page pixels at the chosen render scale
    height: float
    source: str
    text_layer: TextLayer | None = None
    _render: Callable[[], Image.Image] | None = field(default=None, repr=False)
    _image: Image.Image | None = field(default=None, repr=False)

    @property
    def image(self) -> Image.Image:
        if self._image is None:
            if self._render is None:
                raise ValueError(f"{self.source}: page {self.number} has no image")
            self._image = self._render()
        return self._image

    @property
    def has_text(self) -> bool:
        return self.text_layer is not None and any(line.text.strip() for line in self.text_layer.lines)


@dataclass
class Block:
    """A laid-out element of a page, in reading order."""

    type: str  # one of BLOCK_TYPES
    bbox: BBox
    markdown: str

    def __post_init__(self) -> None:
        if self.type not in BLOCK_TYPES:
            raise ValueError(f"unknown block type {self.type!r}")

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "bbox": [round(v, 1) for v in self.bbox], "markdown": self.markdown}


# Header and footer blocks are kept in `blocks` but left out of the page's Markdown.
OMITTED_FROM_MARKDOWN = frozenset({"header", "footer"})


@dataclass
class PageResult:
    """What an engine made of one page."""

    page: int  # 1-based
    blocks: list[Block]
    engine: str
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def markdown(self) -> str:
        return "\n\n".join(b.markdown for b in self.blocks if b.type not in OMITTED_FROM_MARKDOWN and b.markdown)

    def to_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "markdown": self.markdown,
            "blocks": [b.to_json() for b in self.blocks],
            "engine": self.engine,
            "seconds": round(self.seconds, 4),
            "stats": self.stats,
        }


@dataclass
class Document:
    """A parsed document: its source and the results of its selected pages."""

    source: str
    pages: list[PageResult]

    @property
    def markdown(self) -> str:
        return "\n\n".join(p.markdown for p in self.pages if p.markdown) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "pages": [p.to_json() for p in self.pages]}
