"""Reference Markdown of a page in reading order: HTML tables, `$…$` / `$$…$$`, no running heads."""

from __future__ import annotations

from minuscule.synth.blocks import (
    Block, Figure, Footnote, Formula, Heading, ListBlock, Paragraph, Sentence, Span, Table,
)
from minuscule.synth.html import join_spans, row_html


def _span_md(span: Span) -> str:
    if span.kind == "math":
        return f"${span.text}$"
    if span.kind == "bold":
        return f"**{span.text}**"
    if span.kind == "italic":
        return f"*{span.text}*"
    if span.kind == "sup":
        return f"<sup>{span.text}</sup>"
    return span.text


def sentence_md(sentence: Sentence) -> str:
    return join_spans([(s, _span_md(s)) for s in sentence])


def table_md(table: Table) -> str:
    return "\n".join(["<table>", *(row_html(row) for row in table.rows), "</table>"])


def block_md(block: Block) -> str:
    if isinstance(block, Heading):
        return "#" * block.level + " " + block.text
    if isinstance(block, Paragraph):
        return " ".join(sentence_md(s) for s in block.sentences)
    if isinstance(block, ListBlock):
        if block.ordered:
            return "\n".join(f"{k}. {sentence_md(it)}" for k, it in enumerate(block.items, 1))
        return "\n".join(f"- {sentence_md(it)}" for it in block.items)
    if isinstance(block, Table):
        return (block.caption + "\n\n" if block.caption else "") + table_md(block)
    if isinstance(block, Formula):
        return f"$$\n{block.latex}\n$$"
    if isinstance(block, Figure):
        return block.caption  # the picture itself is not described (design.md)
    if isinstance(block, Footnote):
        return f"<sup>{block.number}</sup> {block.text}"
    raise TypeError(f"unknown block {block!r}")


def page_markdown(blocks: list[Block]) -> str:
    """Blocks (already in reading order, trimmed to what the page shows) joined by blank lines."""
    return "\n\n".join(block_md(b) for b in blocks) + "\n"
