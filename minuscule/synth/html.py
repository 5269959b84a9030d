"""The HTML + CSS of a synthetic page; blocks carry `data-b` indices so the browser can trim and measure them."""

from __future__ import annotations

import html
import random
from dataclasses import dataclass

from minuscule.synth.blocks import (
    Block, Figure, Footnote, Formula, Heading, ListBlock, Paragraph, Sentence, Span, Table,
)
from minuscule.synth.layout import PageStyle, Region, RunningHeads

NO_SPACE_BEFORE = (".", ",", ";", ":", "?", "!")


def join_spans(parts: list[tuple[Span, str]]) -> str:
    """Join rendered spans with one space, except before punctuation and footnote markers."""
    out = ""
    for span, rendered in parts:
        if out and not (span.kind == "sup" or span.text.startswith(NO_SPACE_BEFORE)):
            out += " "
        out += rendered
    return out


def _span_html(span: Span) -> str:
    if span.kind == "math":
        return f'<span class="tex" data-tex="{html.escape(span.text, quote=True)}"></span>'
    text = html.escape(span.text, quote=False)
    return {"bold": f"<b>{text}</b>", "italic": f"<i>{text}</i>", "sup": f"<sup>{text}</sup>"}.get(span.kind, text)


def sentence_html(sentence: Sentence) -> str:
    return join_spans([(s, _span_html(s)) for s in sentence])


def sentences_html(sentences: tuple[Sentence, ...]) -> str:
    return " ".join(sentence_html(s) for s in sentences)


def row_html(row) -> str:
    """One table row as `<tr>` with `<th>`/`<td>` cells, spans and escaped text (page and reference alike)."""
    cells = []
    for c in row:
        tag = "th" if c.header else "td"
        attrs = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (f' colspan="{c.colspan}"' if c.colspan > 1 else "")
        cells.append(f"<{tag}{attrs}>{html.escape(c.text, quote=False)}</{tag}>")
    return "<tr>" + "".join(cells) + "</tr>"


def table_html(table: Table) -> str:
    return f'<table class="{table.style}">' + "".join(row_html(row) for row in table.rows) + "</table>"


def block_html(i: int, block: Block, dep: dict[int, int]) -> str:
    if isinstance(block, Heading):
        return f'<h{block.level} data-b="{i}">{html.escape(block.text, quote=False)}</h{block.level}>'
    if isinstance(block, Paragraph):
        return f'<p data-b="{i}">{sentences_html(block.sentences)}</p>'
    if isinstance(block, ListBlock):
        tag = "ol" if block.ordered else "ul"
        items = "".join(f"<li>{sentence_html(it)}</li>" for it in block.items)
        return f'<{tag} data-b="{i}">{items}</{tag}>'
    if isinstance(block, Table):
        cap = f'<div class="cap">{html.escape(block.caption, quote=False)}</div>' if block.caption else ""
        return f'<div class="tbl" data-b="{i}">{cap}{table_html(block)}</div>'
    if isinstance(block, Formula):
        return f'<div class="dm" data-b="{i}"><span class="tex dtex" data-tex="{html.escape(block.latex, quote=True)}"></span></div>'
    if isinstance(block, Figure):
        return (f'<div class="fig" data-b="{i}"><div style="width:{block.width * 100:.0f}%;max-width:{block.max_mm:.0f}mm;margin:0 auto">{block.svg}</div>'
                f'<div class="cap">{html.escape(block.caption, quote=False)}</div></div>')
    if isinstance(block, Footnote):
        return (f'<div class="fnote" data-b="{i}" data-dep="{dep.get(block.number, -1)}">'
                f"<sup>{block.number}</sup> {html.escape(block.text, quote=False)}</div>")
    raise TypeError(f"unknown block {block!r}")


def _heads_html(items: tuple[str, ...], align: str, element: str) -> str:
    if not items:
        return ""
    justify = {"left": "flex-start", "center": "center", "right": "flex-end", "split": "space-between"}[align]
    texts = [html.escape(t, quote=False) for t in items]
    parts = "".join(f"<span>{t}</span>" for t in texts) if align == "split" else f"<span>{' &#8195; '.join(texts)}</span>"
    return f'<div id="{element}" style="justify-content:{justify}">{parts}</div>'


def page_css(style: PageStyle, rng: random.Random) -> str:
    m = style.margin_mm
    accent = rng.choice(["#000", "#222", "#1a3d6d", "#5a1a1a", "#1f4d2b"])
    shade = rng.choice(["#e8e8e8", "#eef2f7", "#f2efe6", "#e6eef0"])
    head_size = rng.uniform(1.05, 1.3)
    return f"""
@page {{ size: {style.width_mm}mm {style.height_mm}mm; margin: 0; }}
html, body {{ margin: 0; padding: 0; background: #fff; }}
#page {{ position: relative; width: {style.width_mm}mm; height: {style.height_mm - 0.3:.1f}mm; box-sizing: border-box;
  padding: {m[0]}mm {m[1]}mm {m[2]}mm {m[3]}mm; display: flex; flex-direction: column; overflow: hidden;
  font-family: "{style.font}"; font-size: {style.font_pt}pt; line-height: {style.line_height}; color: #111;
  font-kerning: normal; hyphens: manual; }}
#body {{ flex: 1 1 auto; min-height: 0; overflow: hidden; }}
#hdr, #ftr {{ position: absolute; left: {m[3]}mm; right: {m[1]}mm; display: flex; font-size: 0.85em; color: #333; }}
#hdr {{ top: {m[0] * 0.35:.1f}mm; {"border-bottom: 0.4pt solid #777;" if rng.random() < 0.5 else ""} }}
#ftr {{ bottom: {m[2] * 0.35:.1f}mm; }}
#hdr span, #ftr span {{ white-space: nowrap; }}
.region {{ column-count: {style.columns}; column-gap: {style.gap_mm}mm;
  {"column-rule: 0.4pt solid #999;" if style.column_rule else ""} }}
.region.full {{ column-count: 1; }}
p {{ margin: 0 0 0.45em 0; text-align: {"justify" if style.justify else "left"}; orphans: 2; widows: 2;
  {"text-indent: 1.2em;" if rng.random() < 0.3 else ""} }}
h1, h2, h3 {{ font-family: "{style.heading_font}"; color: {accent}; break-after: avoid; line-height: 1.2; }}
h1 {{ font-size: {head_size * 1.45:.2f}em; margin: 0 0 0.6em 0; text-align: {rng.choice(["left", "center"])}; }}
h2 {{ font-size: {head_size * 1.12:.2f}em; margin: 0.6em 0 0.35em 0; }}
h3 {{ font-size: {head_size:.2f}em; margin: 0.5em 0 0.3em 0; font-style: {rng.choice(["normal", "italic"])}; }}
ul, ol {{ margin: 0 0 0.45em 0; padding-left: 1.6em; }}
li {{ break-inside: avoid; margin-bottom: 0.15em; }}
.tbl, .dm, .fig {{ break-inside: avoid; margin: 0.5em 0 0.7em 0; }}
.fig svg {{ display: block; }}
.fig .cap {{ margin-top: 0.3em; text-align: center; }}
.cap {{ font-size: 0.9em; margin-bottom: 0.3em; font-style: {rng.choice(["normal", "italic"])}; }}
.dm {{ text-align: center; }}
.dm .katex-display {{ margin: 0.2em 0; }}
table {{ border-collapse: collapse; font-size: {rng.uniform(0.82, 0.95):.2f}em; line-height: 1.25;
  margin: 0 {rng.choice(["auto", "0"])}; }}
th, td {{ padding: 0.2em 0.45em; text-align: {rng.choice(["left", "center", "right"])}; vertical-align: top; }}
th {{ font-weight: {rng.choice(["bold", "bold", "600", "normal"])}; }}
table.grid th, table.grid td {{ border: 0.5pt solid #444; }}
table.grid th {{ background: {shade}; }}
table.ruled {{ border-top: 1.2pt solid #000; border-bottom: 1.2pt solid #000; }}
table.ruled tr:has(th) {{ border-bottom: 0.6pt solid #000; }}
table.striped tr:nth-child(even) td {{ background: {shade}; }}
table.striped th {{ border-bottom: 1pt solid {accent}; }}
#fn {{ flex: none; font-size: 0.8em; border-top: 0.4pt solid #777; padding-top: 0.3em; margin-top: 0.4em; }}
#fn:empty {{ display: none; }}
.fnote {{ margin-bottom: 0.15em; }}
.gone {{ display: none !important; }}
"""


@dataclass(frozen=True)
class PageHTML:
    """A page as a stylesheet and a body; the renderer swaps both into one long-lived document."""

    css: str
    body: str

    def document(self, katex_dir: str) -> str:
        """A standalone HTML file of the page (for looking at it in a browser)."""
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f'<link rel="stylesheet" href="file://{katex_dir}/dist/katex.min.css">'
            f'<script src="file://{katex_dir}/dist/katex.min.js"></script>'
            f"<style>{self.css}</style></head><body>{self.body}</body></html>"
        )


def page_html(style: PageStyle, heads: RunningHeads, blocks: list[Block], regions: tuple[Region, ...],
              footnotes: list[Footnote], rng: random.Random) -> PageHTML:
    """The whole page; footnotes get indices after the body blocks and depend on the paragraph citing them."""
    dep: dict[int, int] = {}
    for i, block in enumerate(blocks):
        if isinstance(block, Paragraph):
            for s in block.sentences:
                for span in s:
                    if span.kind == "sup":
                        dep[int(span.text)] = i
    body = []
    for r, region in enumerate(regions):
        cls = "region" if region.columns > 1 else "region full"
        inner = "".join(block_html(i, blocks[i], dep) for i in region.blocks)
        body.append(f'<div class="{cls}" data-r="{r}">{inner}</div>')
    fn = "".join(block_html(len(blocks) + j, f, dep) for j, f in enumerate(footnotes))
    footer_items = heads.footer + ((heads.page_number,) if heads.page_number else ())
    css = page_css(style, rng)
    return PageHTML(css, (
        '<div id="page">'
        f'{_heads_html(heads.header, style.header_align, "hdr")}'
        f'<div id="body">{"".join(body)}</div><div id="fn">{fn}</div>'
        f'{_heads_html(footer_items, style.footer_align, "ftr")}'
        "</div>"
    ))
