"""PDF loading with pypdfium2: lazily rendered page images and the text layer (chars, lines, rules)."""

from __future__ import annotations

import ctypes
import statistics
from typing import Iterable

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from minuscule.documents.types import Char, Page, Rule, TextLayer, TextLine
from minuscule.errors import InputError

DEFAULT_MAX_SIDE = 1600
# pdfium reports a hyphen that a layout engine inserted at a line break as U+FFFE (older builds: U+0002).
_SOFT_HYPHENS = {0xFFFE, 0x0002, 0x00AD}
SOFT_HYPHEN = "\u00ad"
# TeX and many fonts set ligature glyphs; readers and search want the letters.
_LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st"}
_RULE_THICKNESS_PT = 2.5
_MATH_FONTS = ("math", "katex_", "cmmi", "cmsy", "cmex", "msbm", "msam", "stix", "symbol")


def open_pdf(data: bytes | str, source: str, password: str | None = None) -> pdfium.PdfDocument:
    """Open a PDF, turning pdfium's errors into one-line InputErrors."""
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise InputError(source, "encrypted PDF: a password is needed") from None
        raise InputError(source, f"not a readable PDF (corrupt or truncated): {exc}") from None


def pdf_pages(doc: pdfium.PdfDocument, source: str, numbers: Iterable[int], *, max_side: int | None = None,
              dpi: float | None = None) -> list[Page]:
    """Pages with their text layer; the image renders on first use. `dpi` wins over `max_side`."""
    pages = []
    for number in numbers:
        try:
            pdf_page = doc[number - 1]
            width_pt, height_pt = pdf_page.get_size()
        except pdfium.PdfiumError as exc:
            raise InputError(source, f"page {number} cannot be read: {exc}") from None
        if width_pt <= 0 or height_pt <= 0:
            raise InputError(source, f"page {number} has an empty page box")
        scale = dpi / 72.0 if dpi else (max_side or DEFAULT_MAX_SIDE) / max(width_pt, height_pt)
        layer = extract_text_layer(pdf_page, scale, height_pt)
        pages.append(Page(
            number=number,
            width=width_pt * scale,
            height=height_pt * scale,
            source=source,
            text_layer=layer,
            _render=_renderer(pdf_page, scale),
        ))
    return pages


def _renderer(pdf_page: pdfium.PdfPage, scale: float):
    def render():
        return pdf_page.render(scale=scale, may_draw_forms=True).to_pil().convert("RGB")
    return render


def extract_text_layer(pdf_page: pdfium.PdfPage, scale: float, height_pt: float) -> TextLayer:
    """Chars with boxes in page pixels (top-left origin), grouped into lines, plus ruling lines."""
    chars = list(_chars(pdf_page, scale, height_pt))
    rules: list[Rule] = []
    marks: list = []
    for kind, box in _shapes(pdf_page, scale, height_pt):
        (rules if kind == "rule" else marks).append(Rule(box) if kind == "rule" else box)
    return TextLayer(lines=group_lines(chars), rules=rules, marks=marks)


def _chars(pdf_page: pdfium.PdfPage, scale: float, height_pt: float) -> Iterable[Char]:
    """Chars in content-stream order, boxes by advance width (tight glyph boxes make a narrow "1" look
    like it stands apart); `space_before` records the spaces and line breaks of the text layer."""
    tp = pdf_page.get_textpage()
    n = tp.count_chars()
    rect = raw.FS_RECTF()
    name_buf = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    font_cache: dict[tuple[bytes, int], tuple[bool, bool, bool, bool]] = {}
    high = 0  # pdfium hands out UTF-16 code units: characters beyond the BMP come as surrogate pairs
    space = False
    for i in range(n):
        code = raw.FPDFText_GetUnicode(tp, i)
        if 0xD800 <= code < 0xDC00:
            high = code
            continue
        if 0xDC00 <= code < 0xE000:
            if not high:
                continue
            code, high = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), 0
        if code in (0x20, 0x0D, 0x0A, 0x09, 0xA0) or code == 0:
            space = True
            continue
        # pdfium reports a hyphen at a line end as U+FFFE; kept as U+00AD so layout knows it ends a
        # line there, and printed as "-" where it is not joined.
        text = SOFT_HYPHEN if code in _SOFT_HYPHENS else _LIGATURES.get(code) or chr(code)
        if not raw.FPDFText_GetLooseCharBox(tp, i, rect):
            continue
        raw.FPDFText_GetFontInfo(tp, i, name_buf, 128, flags)
        key = (name_buf.value, flags.value)
        style = font_cache.get(key)
        if style is None:
            name = name_buf.value.decode("latin-1").lower()
            weight = raw.FPDFText_GetFontWeight(tp, i)
            style = font_cache[key] = (
                "bold" in name or "black" in name or "heavy" in name or weight >= 600 or bool(flags.value & (1 << 18)),
                "italic" in name or "oblique" in name or bool(flags.value & 64),
                "mono" in name or "courier" in name or "code" in name or bool(flags.value & 1),
                any(m in name for m in _MATH_FONTS),
            )
        size = raw.FPDFText_GetFontSize(tp, i) * scale
        box = (rect.left * scale, (height_pt - rect.top) * scale, rect.right * scale, (height_pt - rect.bottom) * scale)
        yield Char(text, box, size, *style, space_before=space)
        space = False


def group_lines(chars: Iterable[Char]) -> list[TextLine]:
    """Runs of chars on one baseline without a wide gap. A gap over one em splits a run, so that the two
    columns of a page (or the cells of a borderless table) never share a line."""
    lines: list[TextLine] = []
    run: list[Char] = []
    for c in chars:
        if c.bbox[2] <= c.bbox[0] and c.bbox[3] <= c.bbox[1]:
            continue  # zero-size glyphs carry no position
        if run and not _continues(run[-1], c):
            lines.append(_make_line(run))
            run = []
        run.append(c)
    if run:
        lines.append(_make_line(run))
    return lines


def chars_text(chars: list[Char]) -> str:
    """The text of a run of chars, with a space where the text layer or the gap between glyphs has one."""
    parts = []
    for k, c in enumerate(chars):
        if k and (c.space_before or (not c.exact_spaces and c.bbox[0] - chars[k - 1].bbox[2] > 0.25 * max(c.size, 1.0))):
            parts.append(" ")
        parts.append(c.text)
    return "".join(parts)


def word_runs(chars: Iterable[Char]) -> list[list[Char]]:
    """The chars of a line in words (runs without a space or a space-wide gap between them)."""
    out: list[list[Char]] = []
    prev = None
    for c in chars:
        if c.text.isspace():
            prev = None
            continue
        if prev is None or c.space_before or (not c.exact_spaces and c.bbox[0] - prev.bbox[2] > 0.25 * max(c.size, 1.0)):
            out.append([c])
        else:
            out[-1].append(c)
        prev = c
    return out


def _continues(prev: Char, c: Char) -> bool:
    em = max(prev.size, c.size, 1.0)
    p_top, p_bot, c_top, c_bot = prev.bbox[1], prev.bbox[3], c.bbox[1], c.bbox[3]
    overlap = min(p_bot, c_bot) - max(p_top, c_top)
    min_h = max(min(p_bot - p_top, c_bot - c_top), 1e-3)
    if overlap < 0.4 * min_h:
        return False
    gap = c.bbox[0] - prev.bbox[2]
    # Ligatures report each letter with the glyph's whole box, so a step back of about one glyph is normal.
    return -1.5 * em <= gap <= 1.0 * em


def _make_line(run: list[Char]) -> TextLine:
    x0 = min(c.bbox[0] for c in run)
    y0 = min(c.bbox[1] for c in run)
    x1 = max(c.bbox[2] for c in run)
    y1 = max(c.bbox[3] for c in run)
    letters = [c for c in run if c.text.isalnum()] or run
    return TextLine(
        text=chars_text(run),
        bbox=(x0, y0, x1, y1),
        size=statistics.median(c.size for c in run),
        bold=sum(c.bold for c in letters) > len(letters) / 2,
        mono=sum(c.mono for c in letters) > len(letters) / 2,
        math=sum(c.math for c in run) > len(run) / 2,
        chars=tuple(run),
    )


def _shapes(pdf_page: pdfium.PdfPage, scale: float, height_pt: float) -> Iterable[tuple[str, tuple]]:
    """("rule", box) for thin filled rectangles and stroked segments/rectangles (the ruling lines of
    tables); ("mark", box) for small filled shapes such as list bullets."""
    fill_mode = ctypes.c_int()
    stroke = ctypes.c_int()
    for obj in pdf_page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=3):
        try:
            x0, y0, x1, y1 = obj.get_bounds()
        except pdfium.PdfiumError:
            continue
        w, h = x1 - x0, y1 - y0
        if 1.0 <= w <= 7.0 and 1.0 <= h <= 7.0 and 0.6 <= w / h <= 1.6:
            yield "mark", (x0 * scale, (height_pt - y1) * scale, x1 * scale, (height_pt - y0) * scale)
            continue
        boxes = []
        if (h <= _RULE_THICKNESS_PT and w > 3 * h) or (w <= _RULE_THICKNESS_PT and h > 3 * w):
            boxes.append((x0, y0, x1, y1))
        elif (w > 3 and h > 3 and raw.FPDFPath_CountSegments(obj.raw) in (4, 5)
              and raw.FPDFPath_GetDrawMode(obj.raw, fill_mode, stroke) and stroke.value):
            t = 0.5  # a stroked rectangle: its four edges are rules
            boxes += [(x0, y0, x1, y0 + t), (x0, y1 - t, x1, y1), (x0, y0, x0 + t, y1), (x1 - t, y0, x1, y1)]
        for bx0, by0, bx1, by1 in boxes:
            yield "rule", (bx0 * scale, (height_pt - by1) * scale, bx1 * scale, (height_pt - by0) * scale)
