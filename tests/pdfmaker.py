"""Build small born-digital PDFs for tests with pypdfium2: text at known places, ruling lines, pages."""

from __future__ import annotations

import ctypes
import io
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as raw

A4 = (595.0, 842.0)


@dataclass
class PageSpec:
    """Text and rules for one page; coordinates in points from the TOP-left corner."""

    size: tuple[float, float] = A4
    texts: list[tuple[float, float, str, float, bool]] = field(default_factory=list)  # x, y(baseline), text, size, bold
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)  # x0, y0, x1, y1 (filled rect)

    def text(self, x: float, y: float, s: str, size: float = 10.0, bold: bool = False) -> "PageSpec":
        self.texts.append((x, y, s, size, bold))
        return self

    def rule(self, x0: float, y0: float, x1: float, y1: float) -> "PageSpec":
        self.rules.append((x0, y0, x1, y1))
        return self

    def paragraph(self, x: float, y: float, lines: list[str], size: float = 10.0, leading: float = 13.0) -> float:
        """Lines one below the other; returns the baseline after the last line."""
        for line in lines:
            self.text(x, y, line, size)
            y += leading
        return y


def _widestring(s: str):
    data = (s + "\x00").encode("utf-16-le")
    buf = ctypes.create_string_buffer(data, len(data))
    return ctypes.cast(buf, ctypes.POINTER(raw.FPDF_WCHAR)), buf


def make_pdf(pages: list[PageSpec]) -> bytes:
    pdf = pdfium.PdfDocument.new()
    fonts = {False: raw.FPDFText_LoadStandardFont(pdf.raw, b"Helvetica"),
             True: raw.FPDFText_LoadStandardFont(pdf.raw, b"Helvetica-Bold")}
    for spec in pages:
        w, h = spec.size
        page = pdf.new_page(w, h)
        for x, y, s, size, bold in spec.texts:
            obj = raw.FPDFPageObj_CreateTextObj(pdf.raw, fonts[bold], size)
            ptr, keep = _widestring(s)
            raw.FPDFText_SetText(obj, ptr)
            raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, h - y)
            raw.FPDFPage_InsertObject(page.raw, obj)
            del keep
        for x0, y0, x1, y1 in spec.rules:
            obj = raw.FPDFPageObj_CreateNewRect(x0, h - y1, x1 - x0, y1 - y0)
            raw.FPDFPageObj_SetFillColor(obj, 0, 0, 0, 255)
            raw.FPDFPath_SetDrawMode(obj, raw.FPDF_FILLMODE_ALTERNATE, 0)
            raw.FPDFPage_InsertObject(page.raw, obj)
        page.gen_content()
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def ruled_table(spec: PageSpec, x: float, y: float, col_widths: list[float], rows: list[list[str]],
                row_h: float = 18.0, size: float = 9.0, bold_header: bool = True,
                spans: dict[tuple[int, int], tuple[int, int]] | None = None) -> float:
    """Draw a table with a rule around every cell. `spans[(r, c)] = (rowspan, colspan)` merges cells (the
    covered cells' strings are ignored). Returns the y below the table."""
    spans = spans or {}
    covered: set[tuple[int, int]] = set()
    for (r, c), (rs, cs) in spans.items():
        covered |= {(r + i, c + j) for i in range(rs) for j in range(cs)} - {(r, c)}
    xs = [x]
    for cw in col_widths:
        xs.append(xs[-1] + cw)
    ys = [y + i * row_h for i in range(len(rows) + 1)]
    t = 0.6
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if (r, c) in covered:
                continue
            rs, cs = spans.get((r, c), (1, 1))
            x0, x1, y0, y1 = xs[c], xs[c + cs], ys[r], ys[r + rs]
            spec.rule(x0, y0, x1, y0 + t).rule(x0, y1 - t, x1, y1).rule(x0, y0, x0 + t, y1).rule(x1 - t, y0, x1, y1)
            if text:
                spec.text(x0 + 3, y0 + row_h * 0.65, text, size, bold=bold_header and r == 0)
    return ys[-1]
