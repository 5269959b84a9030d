"""Page templates: paper size and orientation, margins, fonts, 1-3 columns with full-width blocks, running heads."""

from __future__ import annotations

import random
from dataclasses import dataclass

from minuscule.synth.blocks import Block, Formula, Heading, Table
from minuscule.synth.content import ContentMaker, clean

# (name, width mm, height mm) in portrait.
PAPERS = (("A4", 210.0, 297.0), ("Letter", 215.9, 279.4), ("A5", 148.0, 210.0), ("Legal", 215.9, 355.6),
          ("B5", 176.0, 250.0))
PAPER_WEIGHTS = (5, 3, 1, 0.7, 1)

# Families from Debian font packages named in the Makefile (fonts-dejavu, fonts-liberation,
# fonts-urw-base35, fonts-crosextra-*, fonts-linuxlibertine, fonts-freefont-ttf).
SERIF = ("DejaVu Serif", "Liberation Serif", "Nimbus Roman", "C059", "P052", "URW Bookman", "Caladea",
         "Linux Libertine O", "FreeSerif")
SANS = ("DejaVu Sans", "Liberation Sans", "Nimbus Sans", "Carlito", "Linux Biolinum O", "FreeSans",
        "URW Gothic", "Liberation Sans Narrow", "DejaVu Sans Condensed")
ALL_FONTS = SERIF + SANS

HEADER_KINDS = ("journal", "report", "company", "none")
PAGE_NUMBER_FORMATS = ("{n}", "Page {n}", "- {n} -", "{n} / {total}", "Page {n} of {total}", "p. {n}", "[{n}]")


@dataclass(frozen=True)
class PageStyle:
    paper: str
    width_mm: float
    height_mm: float
    landscape: bool
    margin_mm: tuple[float, float, float, float]  # top, right, bottom, left
    font: str
    heading_font: str
    font_pt: float
    line_height: float
    columns: int
    gap_mm: float
    column_rule: bool
    justify: bool
    header_align: str  # "left" | "center" | "right" | "split"
    footer_align: str

    @property
    def content_width_mm(self) -> float:
        return self.width_mm - self.margin_mm[1] - self.margin_mm[3]

    @property
    def content_height_mm(self) -> float:
        return self.height_mm - self.margin_mm[0] - self.margin_mm[2]

    @property
    def column_width_mm(self) -> float:
        return (self.content_width_mm - (self.columns - 1) * self.gap_mm) / self.columns

    def chars_per_line(self, width_mm: float) -> float:
        # An average glyph is about half an em wide in these fonts.
        return width_mm / (self.font_pt * 0.3528 * 0.5)

    def max_table_cols(self, width_mm: float) -> int:
        # Cells hold up to ~9 characters plus padding.
        return max(3, min(9, int(self.chars_per_line(width_mm) / 11)))


@dataclass(frozen=True)
class RunningHeads:
    header: tuple[str, ...]  # texts of the running header (left/right parts), may be empty
    footer: tuple[str, ...]  # footer texts other than the page number
    page_number: str  # as printed, "" when none


@dataclass(frozen=True)
class Region:
    columns: int
    blocks: tuple[int, ...]  # indices into the page's block list, in reading order


def choose_style(rng: random.Random) -> PageStyle:
    name, w, h = rng.choices(PAPERS, weights=PAPER_WEIGHTS)[0]
    landscape = rng.random() < 0.18 and name != "Legal"
    if landscape:
        w, h = h, w
    small = min(w, h) < 180
    margin = rng.uniform(10, 18) if small else rng.uniform(12, 28)
    margins = (round(margin * rng.uniform(0.8, 1.2), 1), round(margin, 1), round(margin * rng.uniform(0.9, 1.3), 1),
               round(margin * rng.uniform(0.9, 1.1), 1))
    content_w = w - margins[1] - margins[3]
    font = rng.choice(ALL_FONTS)
    font_pt = round(rng.uniform(8.0, 10.5) if content_w > 150 else rng.uniform(8.5, 11.5), 1)
    # Columns must stay wide enough for a table of three short columns.
    col_choices = [1]
    if content_w > 135:
        col_choices += [2, 2, 2]
    if content_w > 215:
        col_choices += [3, 3]
    columns = rng.choice(col_choices)
    return PageStyle(
        paper=name, width_mm=w, height_mm=h, landscape=landscape, margin_mm=margins, font=font,
        heading_font=rng.choice([font, font, rng.choice(SANS), rng.choice(SERIF)]), font_pt=font_pt,
        line_height=round(rng.uniform(1.15, 1.45), 2), columns=columns, gap_mm=round(rng.uniform(4, 9), 1),
        column_rule=columns > 1 and rng.random() < 0.3, justify=rng.random() < 0.55,
        header_align=rng.choice(["left", "center", "right", "split"]),
        footer_align=rng.choice(["left", "center", "right", "center"]),
    )


def choose_heads(rng: random.Random, maker: ContentMaker) -> RunningHeads:
    kind = rng.choice(HEADER_KINDS)
    header: tuple[str, ...] = ()
    if kind == "journal":
        header = (f"{maker.title(2, 4)} {rng.randint(1, 80)} ({rng.randint(1990, 2030)})",
                  f"{maker.fake.last_name()} et al.")
    elif kind == "report":
        header = (maker.title(3, 6),)
    elif kind == "company":
        header = (maker.fake.company(), maker.fake.date(pattern="%Y-%m-%d"))
    header = tuple(clean(h) for h in header if clean(h))
    footer: tuple[str, ...] = ()
    if rng.random() < 0.35:
        footer = (clean(f"{maker.title(2, 4)} {rng.randint(2000, 2030)}"),)
    page_number = ""
    if rng.random() < 0.85:
        total = rng.randint(20, 400)
        page_number = rng.choice(PAGE_NUMBER_FORMATS).format(n=rng.randint(2, total), total=total)
    return RunningHeads(header, footer, page_number)


def arrange(blocks: list[Block], style: PageStyle, rng: random.Random) -> tuple[Region, ...]:
    """Split the block flow into regions: the title, wide tables and some formulas span all columns."""
    if style.columns == 1:
        return (Region(1, tuple(range(len(blocks)))),)
    col_table_cols = style.max_table_cols(style.column_width_mm)
    regions: list[Region] = []
    current: list[int] = []
    for i, block in enumerate(blocks):
        full = (isinstance(block, Heading) and block.level == 1) or (
            isinstance(block, Table) and block.n_cols > col_table_cols) or (
            isinstance(block, Formula) and rng.random() < 0.1)
        if full:
            if current:
                regions.append(Region(style.columns, tuple(current)))
                current = []
            regions.append(Region(1, (i,)))
        else:
            current.append(i)
    if current:
        regions.append(Region(style.columns, tuple(current)))
    return tuple(regions)
