"""One synthetic page from a seed: content and layout, rendering with trimming, reference Markdown."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from minuscule.synth.blocks import Block, Formula, ListBlock, Paragraph, Table
from minuscule.synth.content import LOCALES, ContentMaker, make_blocks
from minuscule.synth.html import PageHTML, page_html
from minuscule.synth.layout import PageStyle, Region, RunningHeads, arrange, choose_heads, choose_style
from minuscule.synth.reference import page_markdown
from minuscule.synth.render import PageRenderer, pdf_page_count

MAX_ATTEMPTS = 4


def page_seed(seed: int, index: int, attempt: int) -> int:
    """A 64-bit seed for page `index`, independent of worker count and of other pages."""
    digest = hashlib.sha256(f"minuscule-synth:{seed}:{index}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class PageSpec:
    seed: int
    locale: str
    style: PageStyle
    heads: RunningHeads
    blocks: tuple[Block, ...]  # body blocks in reading order, then footnotes
    n_body: int
    regions: tuple[Region, ...]
    html: PageHTML


@dataclass(frozen=True)
class RenderedPage:
    spec: PageSpec
    kept: tuple[int, ...]  # indices of blocks the page shows, in reading order
    heads: RunningHeads  # the running heads the page shows
    markdown: str
    pdf: bytes
    layout: dict

    @property
    def blocks(self) -> list[Block]:
        return [self.spec.blocks[i] for i in self.kept]


def make_spec(seed: int) -> PageSpec:
    rng = random.Random(seed)
    locale = rng.choice(LOCALES)
    maker = ContentMaker(rng, locale)
    style = choose_style(rng)
    heads = choose_heads(rng, maker)
    line_mm = style.font_pt * 0.3528 * style.line_height
    lines_per_column = style.content_height_mm / line_mm
    # Generate ~1.8 pages of material in column-line units; the browser trims the rest.
    budget = lines_per_column * style.columns * 1.8
    blocks = make_blocks(maker, budget, style.chars_per_line(style.column_width_mm),
                         style.max_table_cols(style.content_width_mm), style.max_table_cols(style.column_width_mm),
                         title=rng.random() < 0.3)
    regions = arrange(blocks, style, rng)
    footnotes = list(maker.footnotes)
    html = page_html(style, heads, blocks, regions, footnotes, rng)
    return PageSpec(seed, locale, style, heads, tuple(blocks) + tuple(footnotes), len(blocks), regions, html)


def has_table_or_formula(blocks: list[Block]) -> bool:
    return any(isinstance(b, (Table, Formula)) for b in blocks)


def render_page(renderer: PageRenderer, seed: int, index: int) -> tuple[RenderedPage | None, int]:
    """Render page `index`; a page that loses all tables and formulas, or prints to more than one
    page, is laid out again from the next attempt's seed. Returns (page or None, attempts used)."""
    for attempt in range(MAX_ATTEMPTS):
        spec = make_spec(page_seed(seed, index, attempt))
        result = renderer.render(spec.html)
        removed = set(result.layout["removed"])
        kept = tuple(i for i in range(len(spec.blocks)) if i not in removed)
        blocks = [spec.blocks[i] for i in kept]
        if not has_table_or_formula(blocks) or not any(i < spec.n_body for i in kept):
            continue
        if pdf_page_count(result.pdf) != 1:
            continue
        shown = result.layout["heads"]
        heads = RunningHeads(
            header=spec.heads.header if shown.get("hdr") else (),
            footer=spec.heads.footer if shown.get("ftr") else (),
            page_number=spec.heads.page_number if shown.get("ftr") else "",
        )
        return RenderedPage(spec, kept, heads, page_markdown(blocks), result.pdf, result.layout), attempt + 1
    return None, MAX_ATTEMPTS


def element_counts(page: RenderedPage) -> dict[str, int]:
    """How many blocks of each kind the page shows, plus the inline formulas inside prose."""
    counts: dict[str, int] = {}
    inline = 0
    for b in page.blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
        sentences = b.sentences if isinstance(b, Paragraph) else b.items if isinstance(b, ListBlock) else ()
        inline += sum(span.kind == "math" for s in sentences for span in s)
    counts["inline_formula"] = inline
    return counts
