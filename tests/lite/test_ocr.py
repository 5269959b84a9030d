"""OCR path of the lite engine on images rendered here from text we know."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest
from pdfmaker import PageSpec, make_pdf

from minuscule.bench.cer import cer, plain_text
from minuscule.documents import load
from minuscule.lite.engine import LiteEngine

pytest.importorskip("rapidocr")

LEFT = ["Nitrate concentrations in small streams", "vary strongly with the season and the", "timing of fertiliser application in the",
        "fields upstream of the gauging stations."]
RIGHT = ["Groundwater contributes roughly forty", "percent of the annual flow but almost", "all of the summer baseflow in dry years",
         "according to our measurements in 2023."]


def rendered_page(tmp_path, dpi: int) -> tuple:
    s = PageSpec()
    s.text(60, 70, "Seasonal Nitrate Transport", 18, bold=True)
    s.paragraph(60, 120, LEFT, size=10, leading=14)
    s.paragraph(320, 120, RIGHT, size=10, leading=14)
    pdf = pdfium.PdfDocument(make_pdf([s]))
    path = tmp_path / "scan.png"
    pdf[0].render(scale=dpi / 72).to_pil().convert("L").save(path)
    truth = " ".join(["Seasonal Nitrate Transport", *LEFT, *RIGHT])
    return path, truth


def test_clean_300dpi_render_has_low_cer_and_column_order(tmp_path):
    path, truth = rendered_page(tmp_path, 300)
    pages = load(path)
    assert not pages[0].has_text
    result = LiteEngine().parse_page(pages[0])
    assert result.stats["source"] == "ocr"
    text = plain_text(result.markdown)
    rate = cer(text, truth)
    assert rate < 0.02, (rate, text)
    # boxes are in the input image's pixels even though OCR ran on a smaller copy
    assert max(b.bbox[2] for b in result.blocks) > 1300


def test_deskew_estimates_the_rotation(tmp_path):
    from PIL import Image

    from minuscule.lite.deskew import estimate_skew

    path, _ = rendered_page(tmp_path, 150)
    img = Image.open(path)
    assert abs(estimate_skew(img)) < 0.15
    assert abs(estimate_skew(img.rotate(1.2, fillcolor=255)) + 1.2) <= 0.2


def test_ruled_table_in_a_tilted_scan_becomes_html(tmp_path):
    from PIL import Image
    from pdfmaker import ruled_table

    s = PageSpec()
    s.paragraph(60, 80, ["Mean values at the four stations follow."], size=11)
    rows = [["Station", "Area", "Flow", "Nitrate"], ["Weiden", "12.4", "0.18", "31.2"], ["Hollbach", "38.9", "0.61", "27.5"]]
    ruled_table(s, 60, 110, [150, 100, 100, 100], rows, row_h=24, size=11)
    img = pdfium.PdfDocument(make_pdf([s]))[0].render(scale=200 / 72).to_pil().convert("L")
    path = tmp_path / "table.png"
    img.rotate(0.9, resample=Image.BICUBIC, fillcolor=255).save(path)
    result = LiteEngine().parse_page(load(path)[0])
    html = next(b.markdown for b in result.blocks if b.type == "table")
    assert "<tr><td>Weiden</td><td>12.4</td><td>0.18</td><td>31.2</td></tr>" in html
    assert abs(result.stats["deskew_degrees"] + 0.9) <= 0.2


def test_lines_joined_across_a_narrow_gutter_are_cut_there():
    from minuscule.documents.types import Char, TextLine
    from minuscule.lite.ocr import split_at_gutters

    def column(x0: float, x1: float, n: int, row: int, y0: float, y1: float, first: int) -> list[Char]:
        gap = 4.0 + (row % 3)  # justified text: the word gap differs from line to line
        w = (x1 - x0 - gap * (n - 1)) / n
        return [Char(f"w{row}{first + k}", (x0 + k * (w + gap), y0, x0 + k * (w + gap) + w, y1), 20.0,
                     space_before=first + k > 0) for k in range(n)]

    lines = []
    for row in range(8):
        y0, y1 = 100 + row * 30, 120 + row * 30
        words = column(50, 300, 5, row, y0, y1, 0) + column(311, 560, 5, row, y0, y1, 5)  # an 11 px gutter
        lines.append(TextLine(" ".join(c.text for c in words), (50, y0, 560, y1), 20.0, chars=tuple(words)))
    full = column(50, 560, 9, 9, 400, 420, 0)  # a full-width line below crosses the gutter and stays whole
    lines.append(TextLine(" ".join(c.text for c in full), (50, 400, 560, 420), 20.0, chars=tuple(full)))
    out = split_at_gutters(lines)
    assert len(out) == 17
    assert [ln.text for ln in out[:2]] == ["w00 w01 w02 w03 w04", "w05 w06 w07 w08 w09"]
    assert out[-1].text.count("w") == 9
    left, right = out[2], out[3]
    assert right.bbox[0] - left.bbox[2] >= 8  # the gutter is kept clear for reading order
