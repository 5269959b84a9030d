"""Regenerate the bundled samples: a two-column born-digital report (PDF) and a scanned-style page.

Run from the repository root: `.venv/bin/python examples/make_examples.py` (needs Debian's chromium).
The outputs are committed, so `make demo` does not need a browser.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageFilter

from minuscule.browser import launch_chromium

HERE = Path(__file__).resolve().parent

PARAGRAPHS = [
    "Small lowland rivers carry most of their nitrate load in late winter, when soils are wet and fields are "
    "bare. Between 2019 and 2023 we sampled nine gauging stations along the Kessel every two weeks and "
    "collected 1,184 water samples, which were filtered on site and analysed within two days.",
    "Most of the catchment is drained by tiles laid before 1975, so water reaches the channel within hours of "
    "heavy rain. Groundwater contributes roughly forty percent of the annual flow but almost all of the summer "
    "baseflow, which keeps concentrations high even in dry years.",
    "Discharge was measured with pressure transducers and converted to flow with rating curves that were "
    "checked twice a year against current-meter gaugings. Missing days were filled by linear interpolation "
    "when the gap was shorter than six days; longer gaps were left empty.",
    "Concentrations fall with catchment area, which points to dilution by forested tributaries rather than "
    "to in-stream removal. A first-order decay model fits the downstream profile with a rate constant of "
    "0.021 per kilometre and explains most of the variance between stations.",
    "Because tile drains bypass the riparian buffer, measures that delay drainage in spring are likely to "
    "reduce peak loads more than wider field margins. We recommend keeping the stations at the headwater and "
    "at the outlet, and adding automatic samplers for storm events, which the fortnightly scheme missed.",
]

TABLE = [("Station", "Area (km²)", "Flow (m³/s)", "Nitrate (mg/l)"),
         ("K1 Weiden", "12.4", "0.18", "31.2"), ("K3 Hollbach", "38.9", "0.61", "27.5"),
         ("K5 Marten", "74.2", "1.07", "22.8"), ("K9 Outlet", "151.6", "2.34", "18.9")]


def report_html() -> str:
    rows = "".join("<tr>" + "".join((f"<th>{c}</th>" if i == 0 else f"<td>{c}</td>") for c in row) + "</tr>"
                   for i, row in enumerate(TABLE))
    body = []
    sections = ["Introduction", "Study area", "Methods", "Results", "Discussion", "Outlook"]
    for k, title in enumerate(sections):
        body.append(f"<h2>{k + 1}. {title}</h2>")
        for j in range(3):
            body.append(f"<p>{PARAGRAPHS[(k + j) % len(PARAGRAPHS)]}</p>")
        if title == "Results":
            body.append(f"<table>{rows}</table><p class=cap>Table 1: Mean values at the four complete stations.</p>")
        if title == "Methods":
            body.append("<ul><li>fortnightly grab samples at nine stations</li>"
                        "<li>continuous discharge from pressure transducers</li>"
                        "<li>laboratory analysis within 48 hours</li></ul>")
    return f"""<!doctype html><html><head><meta charset=utf-8><style>
@page {{ size: A4; margin: 22mm 18mm 20mm 18mm; }}
body {{ font-family: 'Liberation Serif', serif; font-size: 10.5pt; line-height: 1.35; }}
h1 {{ font-family: 'Liberation Sans', sans-serif; font-size: 19pt; margin: 0 0 4pt 0; }}
.sub {{ font-style: italic; margin: 0 0 14pt 0; }}
.cols {{ column-count: 2; column-gap: 9mm; text-align: justify; hyphens: auto; }}
h2 {{ font-family: 'Liberation Sans', sans-serif; font-size: 12.5pt; margin: 10pt 0 4pt 0; }}
p {{ margin: 0 0 6pt 0; }}
table {{ border-collapse: collapse; width: 100%; margin: 6pt 0; font-size: 9pt; }}
th, td {{ border: 0.8pt solid #000; padding: 2pt 4pt; text-align: left; }}
.cap {{ font-size: 9pt; }}
</style></head><body lang=en>
<h1>Seasonal Nitrate Transport in the Upper Kessel Catchment</h1>
<p class=sub>Technical Note 14 &middot; Hydrology Group &middot; March 2024</p>
<div class=cols>{''.join(body)}</div></body></html>"""


FOOTER = ("<div style='font-size:8pt;width:100%;text-align:center;font-family:Liberation Sans'>"
          "Kessel Catchment Study &mdash; page <span class=pageNumber></span> of <span class=totalPages></span></div>")


def make_pdf(path: Path) -> None:
    pw, browser = launch_chromium()
    try:
        page = browser.new_page()
        page.set_content(report_html())
        pdf = page.pdf(format="A4", print_background=True, display_header_footer=True,
                       header_template="<div></div>", footer_template=FOOTER,
                       margin={"top": "22mm", "bottom": "20mm", "left": "18mm", "right": "18mm"})
    finally:
        browser.close()
        pw.stop()
    path.write_bytes(pdf)


def make_scan(pdf_path: Path, path: Path, seed: int = 7) -> None:
    """Page 1 at 200 dpi, slightly rotated, blurred and noisy, saved as a JPEG like a office scanner."""
    rng = np.random.default_rng(seed)
    img = pdfium.PdfDocument(pdf_path)[0].render(scale=200 / 72).to_pil().convert("L")
    img = img.rotate(random.Random(seed).uniform(-0.8, 0.8), resample=Image.BICUBIC, fillcolor=255, expand=False)
    img = img.filter(ImageFilter.GaussianBlur(0.6))
    arr = np.asarray(img, dtype=np.float32) + rng.normal(0, 10, (img.height, img.width))
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(path, quality=70)


def page_truths(pdf_path: Path) -> dict[str, str]:
    """The text Chromium printed on each page, in document order, without the running footer. pdfium
    reports every hyphen at a line end as U+FFFE; the source text says whether it was a real one."""
    source = " ".join(PARAGRAPHS)
    out = {}
    for i, page in enumerate(pdfium.PdfDocument(pdf_path), 1):
        text = page.get_textpage().get_text_range()
        text = text.split("Kessel Catchment Study — page")[0]

        def hyphen(m: re.Match) -> str:
            left, right = m.group(1), m.group(2)
            return f"{left}-{right}" if f"{left}-{right}" in source else left + right

        text = re.sub(r"(\w+)\ufffe(?:\r\n)?(\w+)", hyphen, text).replace("\r\n", " ")
        out[str(i)] = " ".join(text.split())
    return out


def write_truths(pdf_path: Path) -> None:
    truths = page_truths(pdf_path)
    (HERE / "report.truth.json").write_text(json.dumps(truths, ensure_ascii=False, indent=1) + "\n")
    (HERE / "scan.truth.json").write_text(json.dumps({"1": truths["1"]}, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    make_pdf(HERE / "report.pdf")
    make_scan(HERE / "report.pdf", HERE / "scan.jpg")
    write_truths(HERE / "report.pdf")
    print("wrote", HERE / "report.pdf", HERE / "scan.jpg", "and their *.truth.json")
