"""Lines of one column → Blocks: paragraphs (de-hyphenated), headings, lists, code and captions."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field, replace

from minuscule.documents.pdf import SOFT_HYPHEN
from minuscule.lite.hyphens import keep_hyphen
from minuscule.documents.types import BBox, Block, TextLine

BULLET = re.compile(r"^([•◦▪▫‣∙●○■□►▸–—*·-])\s+")
NUMBERED = re.compile(r"^(\(?(\d{1,3}|[a-zA-Z]|[ivxlcdm]{1,5})[.)])\s+")
CAPTION = re.compile(r"^(Table|Figure|Fig\.|Listing|Algorithm)\s+[\dIVX]+[.:]?", re.IGNORECASE)
# A numbered heading such as "2.1 Methods" is not a list item when its font says heading.
SECTION = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.)\s+[A-Z][^.!?]{0,80}$")
_SENTENCE_END = re.compile(r"[.:;,!?]$")


@dataclass
class Row:
    """Lines of one column that sit on the same baseline, read left to right."""

    text: str
    bbox: BBox
    size: float
    bold: bool
    mono: bool
    math: bool = False

    @classmethod
    def of(cls, lines: list[TextLine]) -> "Row":
        lines = sorted(lines, key=lambda ln: ln.bbox[0])
        n = sum(len(ln.text) for ln in lines) or 1
        return cls(
            text=" ".join(ln.text for ln in lines),
            bbox=(min(ln.bbox[0] for ln in lines), min(ln.bbox[1] for ln in lines),
                  max(ln.bbox[2] for ln in lines), max(ln.bbox[3] for ln in lines)),
            size=max(ln.size for ln in lines),
            bold=sum(len(ln.text) * ln.bold for ln in lines) > n / 2,
            mono=sum(len(ln.text) * ln.mono for ln in lines) > n / 2,
            math=sum(len(ln.text) * ln.math for ln in lines) > n / 2,
        )


@dataclass
class Style:
    """Page- or document-wide typography: body size and the heading sizes above it, largest first."""

    body: float
    heading_sizes: list[float] = field(default_factory=list)
    # OCR boxes vary in height with ascenders and descenders, so a heading must stand out more.
    factor: float = 1.15

    @classmethod
    def of(cls, lines: list[TextLine], factor: float = 1.15) -> "Style":
        weights: dict[float, int] = {}
        for ln in lines:
            if ln.math or not _wordy(ln.text):
                continue
            key = round(ln.size * 2) / 2
            weights[key] = weights.get(key, 0) + len(ln.text)
        if not weights:
            return cls(body=10.0, factor=factor)
        body = max(weights, key=weights.get)
        bigger: list[float] = []
        for size in sorted((s for s in weights if s >= body * factor), reverse=True):
            if not bigger or size < bigger[-1] / 1.08:  # sizes within 8% are one level (OCR boxes jitter)
                bigger.append(size)
        return cls(body=body, heading_sizes=bigger, factor=factor)

    def heading_level(self, row: Row) -> int:
        """1.. for a heading, 0 for body text."""
        text = row.text.strip()
        if not _wordy(text):
            return 0  # formulas and number rows are set large or bold, but they are not headings
        # OCR cannot see bold, so a numbered section title of body size counts there too.
        ocr = self.factor >= 1.3
        if (SECTION.match(text) and len(text) <= (40 if ocr else 60) and (not ocr or _title_like(text))
                and row.size >= self.body * (0.95 if ocr else 1.05)):
            return min(len([s for s in self.heading_sizes if s > row.size * 1.08]) + 1, 6)
        if ocr and row.size < 1.6 * self.body and not _title_like(text):
            return 0  # OCR box heights jitter: a heading of modest size must also read like one
        if row.size >= self.body * self.factor and len(text) <= 120:
            for i, s in enumerate(self.heading_sizes):
                if row.size >= s / 1.08:
                    return min(i + 1, 5)
            return min(len(self.heading_sizes), 5) or 1
        if row.bold and len(row.text) <= 90 and not _SENTENCE_END.search(row.text):
            return min(len(self.heading_sizes) + 1, 6)
        return 0


def _wordy(text: str) -> bool:
    """Mostly letters and no equals sign: could be a heading (formulas and figures can't)."""
    compact = text.replace(" ", "")
    return bool(compact) and sum(ch.isalpha() for ch in compact) >= 0.5 * len(compact) and "=" not in compact


def _title_like(text: str) -> bool:
    """Short, starts with a capital or a number, no sentence break inside, no trailing comma, and no
    trailing hyphen unless the word before it is capitalised (a title's compound wrapping: "Task-")."""
    return (len(text) <= 80 and (text[:1].isupper() or text[:1].isdigit()) and ". " not in text.rstrip(".")
            and not re.search(r"[,;]$", text) and not re.search(r"(^|[\s-])[^\sA-Z][^\s-]*-$", text))


def group_rows(lines: list[TextLine]) -> list[list[TextLine]]:
    """Lines whose vertical extents mostly overlap (e.g. an equation and its number, or the cells of a
    table row), top to bottom, each row left to right."""
    rows: list[list[TextLine]] = []
    for ln in sorted(lines, key=lambda ln: (ln.bbox[1], ln.bbox[0])):
        if rows:
            last = rows[-1]
            top, bot = min(x.bbox[1] for x in last), max(x.bbox[3] for x in last)
            overlap = min(bot, ln.bbox[3]) - max(top, ln.bbox[1])
            if overlap > 0.5 * min(bot - top, ln.bbox[3] - ln.bbox[1]):
                last.append(ln)
                continue
        rows.append([ln])
    return [sorted(r, key=lambda ln: ln.bbox[0]) for r in rows]


def rows_of(lines: list[TextLine]) -> list[Row]:
    return [Row.of(r) for r in group_rows(lines)]


def attach_bullets(lines: list[TextLine], marks: list[BBox]) -> list[TextLine]:
    """Lines that start just right of a drawn bullet (a small filled shape) get a "•" in front."""
    out = []
    for ln in lines:
        em = max(ln.size, 1.0)
        cy = (ln.bbox[1] + ln.bbox[3]) / 2
        mark = next((m for m in marks if ln.bbox[0] - 2.5 * em <= m[0] and m[2] <= ln.bbox[0]
                     and ln.bbox[1] <= (m[1] + m[3]) / 2 <= ln.bbox[3] and abs((m[1] + m[3]) / 2 - cy) < 0.6 * em), None)
        if mark is None:
            out.append(ln)
        else:
            out.append(replace(ln, text="• " + ln.text, bbox=(mark[0], ln.bbox[1], ln.bbox[2], ln.bbox[3])))
    return out


def join_lines(texts: list[str]) -> str:
    """Join the lines of a paragraph. A hyphen at a line break goes when the next line starts in lower
    case ("sta-" + "tion") unless the two halves make a hyphenated compound ("task-" + "force"); before
    a capital it stays, without a space ("well-" + "Known")."""
    out = ""
    for t in texts:
        t = t.strip()
        if not t:
            continue
        if out.endswith(("-", SOFT_HYPHEN)) and len(out) > 1 and out[-2].isalpha():
            joined = t[:1].islower() and not keep_hyphen(out[:-1], t)
            out = (out[:-1] if joined else out[:-1] + "-") + t
        elif out.endswith("-") and len(out) > 1 and out[-2].isdigit() and t[:1].isdigit():
            out += t  # a range broken after its dash: "12-" + "15"
        else:
            out = f"{out} {t}" if out else t
    return out


def column_blocks(rows: list[Row], style: Style) -> list[Block]:
    """Paragraphs, headings, list items, code and captions of one column, in order."""
    if not rows:
        return []
    left = min(r.bbox[0] for r in rows)
    right = max(r.bbox[2] for r in rows)
    gaps = [b.bbox[1] - a.bbox[3] for a, b in zip(rows, rows[1:]) if b.bbox[1] > a.bbox[3]]
    usual_gap = statistics.median(gaps) if gaps else 0.0
    row_kinds = [_kind(row, style) for row in rows]
    if style.factor >= 1.3:  # OCR
        # A heading's first line without descenders gets a lower box than its second: the first line
        # reads like a title and sits at line spacing above the heading line, so it is the heading too.
        for i in range(len(rows) - 2, -1, -1):
            nxt = row_kinds[i + 1]
            pitch = rows[i + 1].bbox[1] - rows[i].bbox[1]
            if (row_kinds[i] == "text" and nxt.startswith("h") and _title_like(rows[i].text.strip())
                    and 0 < pitch <= 1.6 * max(rows[i].size, rows[i + 1].size) and (i == 0 or row_kinds[i - 1] != "text"
                                                          or rows[i].bbox[1] - rows[i - 1].bbox[3] > 0.5 * rows[i].size)):
                row_kinds[i] = nxt
        for i in range(1, len(rows)):  # and a heading broken after a hyphen continues on the next line
            pitch = rows[i].bbox[1] - rows[i - 1].bbox[1]
            if (row_kinds[i] == "text" and row_kinds[i - 1].startswith("h") and rows[i - 1].text.rstrip().endswith("-")
                    and 0 < pitch <= 1.6 * max(rows[i].size, rows[i - 1].size) and len(rows[i].text) <= 60):
                row_kinds[i] = row_kinds[i - 1]
    groups: list[list[Row]] = []
    kinds: list[str] = []
    for i, row in enumerate(rows):
        kind = row_kinds[i]
        if (i and kinds and kind.startswith("h") and kinds[-1].startswith("h") and kind != kinds[-1]
                and abs(row.size - rows[i - 1].size) <= (0.25 if style.factor >= 1.3 else 0.1) * max(row.size, rows[i - 1].size)):
            # Two lines of one heading whose sizes straddle a level boundary (OCR box heights vary with
            # descenders by a fifth: "Upper Kessel" is taller than "Catchment").
            kind = kinds[-1]
        if groups and not _starts_new(rows[i - 1], row, kinds[-1], kind, (left, right), usual_gap, style):
            groups[-1].append(row)
            continue
        groups.append([row])
        kinds.append(kind)
    return [_block(kind, group, style) for kind, group in zip(kinds, groups)]


def _kind(row: Row, style: Style) -> str:
    if row.math:
        return "formula"
    if row.mono:
        return "code"
    level = style.heading_level(row)
    if level:
        return f"h{level}"
    if BULLET.match(row.text) or NUMBERED.match(row.text):
        return "item"
    if CAPTION.match(row.text):
        return "caption"
    return "text"


def _starts_new(prev: Row, row: Row, prev_kind: str, kind: str, span: tuple[float, float], usual_gap: float,
                style: Style) -> bool:
    left, right = span
    gap = row.bbox[1] - prev.bbox[3]
    em = max(style.body, 1.0)
    if kind == "item" or kind != prev_kind and not (prev_kind in ("item", "caption") and kind == "text"):
        return True
    if kind == "formula":
        return gap > 1.5 * em
    if kind.startswith("h"):
        # A heading wrapped over two lines stays one. The font size, not the box, sets the scale: a
        # short last line without descenders ("Set") has a box well under the size.
        scale = max(row.bbox[3] - row.bbox[1], row.size, prev.bbox[3] - prev.bbox[1], prev.size)
        # OCR boxes of one heading's lines differ in height with their letters, so allow more there.
        return gap > (0.8 if style.factor >= 1.3 else 0.6) * scale
    if gap > max(usual_gap * 1.5, usual_gap + 0.35 * em):
        return True
    if prev_kind == "item":
        # continuation lines of a list item are indented past the bullet
        return row.bbox[0] < left + 0.5 * em and prev.bbox[0] >= left + 0.5 * em
    if kind == "text" and row.bbox[0] > left + 0.8 * em and prev.bbox[0] <= left + 0.4 * em:
        return True  # first-line indent
    # A sentence that ends well short of the column's right edge ends its paragraph.
    return kind == "text" and bool(re.search(r"[.!?:]$", prev.text)) and prev.bbox[2] < right - 0.15 * (right - left)


def _block(kind: str, rows: list[Row], style: Style) -> Block:
    bbox = (min(r.bbox[0] for r in rows), min(r.bbox[1] for r in rows),
            max(r.bbox[2] for r in rows), max(r.bbox[3] for r in rows))
    texts = [r.text for r in rows]
    if kind == "formula":
        # No LaTeX from a text layer: the glyphs are kept as they are (see the README).
        return Block("formula", bbox, " ".join(texts))
    if kind == "code":
        return Block("code", bbox, "```\n" + "\n".join(texts) + "\n```")
    if kind.startswith("h"):
        level = int(kind[1:])
        return Block("title", bbox, "#" * level + " " + join_lines(texts))
    if kind == "item":
        text = join_lines(texts)
        m = BULLET.match(text)
        text = "- " + text[m.end():] if m else text
        return Block("list", bbox, text)
    if kind == "caption":
        return Block("caption", bbox, join_lines(texts))
    return Block("text", bbox, join_lines(texts))


def merge_blocks(blocks: list[Block]) -> list[Block]:
    """Consecutive list items become one list block (one item per line), and a paragraph cut by a column
    or page break (no closing punctuation, next part starts in lower case) is joined again."""
    out: list[Block] = []
    for b in blocks:
        if (b.type == "text" and out and out[-1].type == "text" and b.markdown[:1].islower()
                and not re.search(r"[.!?:;]$", out[-1].markdown)):
            out[-1] = Block("text", out[-1].bbox, join_lines([out[-1].markdown, b.markdown]))
        elif b.type == "list" and out and out[-1].type == "list":
            prev = out[-1]
            bbox = (min(prev.bbox[0], b.bbox[0]), min(prev.bbox[1], b.bbox[1]),
                    max(prev.bbox[2], b.bbox[2]), max(prev.bbox[3], b.bbox[3]))
            out[-1] = Block("list", bbox, prev.markdown + "\n" + b.markdown)
        else:
            out.append(b)
    return out
