"""Peer corpus, rendering: documents made with LaTeX, LibreOffice and Chromium, checked against their blocks, and scanned."""

from __future__ import annotations

import html
import io
import random
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from corpus_content import Block, Doc  # noqa: E402

# ---------------------------------------------------------------------------------------------------------------
# Makers


def tex_escape(s: str) -> str:
    rep = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
           "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(rep.get(ch, ch) for ch in s)


def latex_source(doc: Doc) -> str:
    # Computer Modern stays in OT1 (its T1 Type 1 fonts, cm-super, are not in the small texlive set).
    font = {"times": "\\usepackage[T1]{fontenc}\n\\usepackage{mathptmx}", "cm": "",
            "palatino": "\\usepackage[T1]{fontenc}\n\\usepackage{mathpazo}",
            "helvet": "\\usepackage[T1]{fontenc}\n\\usepackage[scaled=0.92]{helvet}\\renewcommand{\\familydefault}{\\sfdefault}"}
    opts = "twocolumn," if doc.columns == 2 else ""
    foot = tex_escape(doc.footer).replace(r"\{n\}", r"\thepage{}").replace(r"\{m\}", str(len(doc.pages)))
    out = [
        rf"\documentclass[{opts}10pt,a4paper]{{article}}",
        font[doc.style],
        r"\usepackage[margin=2cm,headsep=0.6cm]{geometry}",
        r"\usepackage{booktabs}",
        r"\usepackage{fancyhdr}",
        r"\pagestyle{fancy}",
        r"\fancyhf{}",
        rf"\fancyhead[L]{{\small {tex_escape(doc.header)}}}",
        rf"\fancyfoot[C]{{\small {foot}}}",
        r"\setlength{\parskip}{0.4em}",
        r"\begin{document}",
    ]
    for i, page in enumerate(doc.pages):
        if i:
            out.append(r"\clearpage")
        body = []
        for b in page:
            if b.kind == "title":
                title = rf"{{\centering\LARGE\bfseries {tex_escape(b.text)}\par\vspace{{1em}}}}"
                if doc.columns == 2:
                    out.append(rf"\twocolumn[{title}]")
                    out.append(r"\thispagestyle{fancy}")
                else:
                    body.append(title)
            elif b.kind == "h":
                body.append(rf"\section*{{{tex_escape(b.text)}}}")
            elif b.kind == "p":
                body.append(tex_escape(b.text) + "\n")
            elif b.kind == "caption":
                body.append(rf"\noindent{{\small {tex_escape(b.text)}}}\par\nopagebreak")
            elif b.kind in ("ul", "ol"):
                env = "itemize" if b.kind == "ul" else "enumerate"
                body.append(rf"\begin{{{env}}}" + "".join(rf"\item {tex_escape(x)} " for x in b.items)
                            + rf"\end{{{env}}}")
            elif b.kind == "code":
                body.append(r"\begin{verbatim}" + "\n" + "\n".join(b.items) + "\n" + r"\end{verbatim}")
            elif b.kind == "table":
                n = len(b.rows[0])
                cells = [" & ".join(tex_escape(c) for c in r) + r" \\" for r in b.rows]
                if b.text == "booktabs":
                    spec, top, mid, bot, sep = "l" + "r" * (n - 1), r"\toprule", r"\midrule", r"\bottomrule", ""
                elif b.text == "ruled":
                    spec, top, mid, bot, sep = "|l|" + "r|" * (n - 1), r"\hline", r"\hline", r"\hline", r"\hline"
                else:
                    spec, top, mid, bot, sep = "l" + "r" * (n - 1), "", "", "", ""
                rows = [cells[0], mid] + [c + (" " + sep if sep and k < len(cells) - 2 else "")
                                          for k, c in enumerate(cells[1:])]
                body.append(r"\begin{center}\small" + "\n" + rf"\begin{{tabular}}{{{spec}}}" + top + "\n"
                            + "\n".join(rows) + bot + "\n" + r"\end{tabular}\end{center}")
        out.extend(body)
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


def make_latex(doc: Doc, work: Path) -> Path:
    tex = work / f"{doc.id}.tex"
    tex.write_text(latex_source(doc))
    for _ in range(2):  # twice, as LaTeX wants for stable layout
        r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=work,
                           capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"pdflatex failed for {doc.id}: {r.stdout[-1500:]}")
    return work / f"{doc.id}.pdf"


HTML_CSS = """
@page { size: A4; margin: 22mm 18mm 20mm 18mm; }
body { font-family: %(font)s; font-size: %(size)s; line-height: 1.35; color: #111; margin: 0; }
.page { column-count: %(cols)d; column-gap: 8mm; }
.page + .page { break-before: page; }
h1 { font-size: 20pt; column-span: all; margin: 0 0 10px 0; }
h2 { font-size: 13pt; margin: 12px 0 4px 0; break-after: avoid; }
p { margin: 0 0 7px 0; text-align: %(align)s; }
.caption { font-size: 9pt; font-style: italic; margin-top: 8px; }
table { border-collapse: collapse; margin: 4px 0 10px 0; font-size: 9.5pt; break-inside: avoid; }
td, th { padding: 2px 7px; text-align: left; }
table.ruled td, table.ruled th { border: 1px solid #333; }
table.borderless th { font-weight: bold; }
pre { font-family: 'DejaVu Sans Mono', monospace; font-size: 8.5pt; background: #f3f3f3; padding: 5px;
      break-inside: avoid; }
ul, ol { margin: 0 0 7px 0; padding-left: 22px; }
"""


def html_source(doc: Doc) -> str:
    font, size, align = {"sans": ("'DejaVu Sans', sans-serif", "9.5pt", "left"),
                         "serif": ("'Liberation Serif', serif", "11pt", "justify"),
                         "narrow": ("'Liberation Sans', sans-serif", "9pt", "left")}[doc.style]
    css = HTML_CSS % {"font": font, "size": size, "cols": doc.columns, "align": align}
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><style>{css}</style></head><body>"]
    for page in doc.pages:
        parts.append("<div class='page'>")
        for b in page:
            e = html.escape
            if b.kind == "title":
                parts.append(f"<h1>{e(b.text)}</h1>")
            elif b.kind == "h":
                parts.append(f"<h2>{e(b.text)}</h2>")
            elif b.kind == "p":
                parts.append(f"<p>{e(b.text)}</p>")
            elif b.kind == "caption":
                parts.append(f"<p class='caption'>{e(b.text)}</p>")
            elif b.kind in ("ul", "ol"):
                parts.append(f"<{b.kind}>" + "".join(f"<li>{e(x)}</li>" for x in b.items) + f"</{b.kind}>")
            elif b.kind == "code":
                parts.append("<pre>" + e("\n".join(b.items)) + "</pre>")
            elif b.kind == "table":
                cls = "ruled" if b.ruled else "borderless"
                head = "".join(f"<th>{e(c)}</th>" for c in b.rows[0])
                body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in b.rows[1:])
                parts.append(f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        parts.append("</div>")
    parts.append("</body></html>")
    return "".join(parts)


class Chromium:
    """One Playwright Chromium for all HTML documents of a run."""

    def __init__(self):
        from minuscule.browser import launch_chromium

        self.pw, self.browser = launch_chromium()

    def pdf(self, doc: Doc, out: Path) -> Path:
        page = self.browser.new_page()
        try:
            page.set_content(html_source(doc), wait_until="load")
            tpl = "<div style='font-size:8px; width:100%; margin:0 18mm; font-family:sans-serif; {align}'>{body}</div>"
            foot = html.escape(doc.footer).replace("{n}", "<span class='pageNumber'></span>").replace(
                "{m}", "<span class='totalPages'></span>")
            page.pdf(path=str(out), format="A4", display_header_footer=True, print_background=True,
                     header_template=tpl.format(align="text-align:right", body=html.escape(doc.header)),
                     footer_template=tpl.format(align="text-align:center", body=foot),
                     margin={"top": "22mm", "bottom": "20mm", "left": "18mm", "right": "18mm"})
        finally:
            page.close()
        return out

    def close(self):
        self.browser.close()
        self.pw.stop()


FODT_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls>
 <style:font-face style:name="{font}" svg:font-family="'{font}'"/>
 <style:font-face style:name="Liberation Mono" svg:font-family="'Liberation Mono'"/>
</office:font-face-decls>
<office:styles>
 <style:style style:name="Standard" style:family="paragraph">
  <style:paragraph-properties fo:margin-bottom="0.18cm" fo:text-align="{align}"/>
  <style:text-properties style:font-name="{font}" fo:font-size="{size}"/></style:style>
 <style:style style:name="Title" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:text-align="center" fo:margin-bottom="0.4cm"/>
  <style:text-properties fo:font-size="20pt" fo:font-weight="bold"/></style:style>
 <style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph" style:parent-style-name="Standard"
  style:default-outline-level="2">
  <style:paragraph-properties fo:margin-top="0.35cm" fo:margin-bottom="0.15cm" fo:text-align="start" fo:keep-with-next="always"/>
  <style:text-properties fo:font-size="13pt" fo:font-weight="bold"/></style:style>
 <style:style style:name="Caption" style:family="paragraph" style:parent-style-name="Standard">
  <style:text-properties fo:font-size="9pt" fo:font-style="italic"/></style:style>
 <style:style style:name="Code" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:margin-bottom="0cm" fo:text-align="start"/>
  <style:text-properties style:font-name="Liberation Mono" fo:font-size="9pt"/></style:style>
 <style:style style:name="Cell" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:margin-bottom="0cm" fo:text-align="start"/>
  <style:text-properties fo:font-size="9.5pt"/></style:style>
 <style:style style:name="Cellhead" style:family="paragraph" style:parent-style-name="Cell">
  <style:text-properties fo:font-weight="bold"/></style:style>
 <style:style style:name="Furniture" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:text-align="{falign}"/>
  <style:text-properties fo:font-size="8.5pt"/></style:style>
 <text:list-style style:name="Bullets">
  <text:list-level-style-bullet text:level="1" text:bullet-char="•">
   <style:list-level-properties text:list-level-position-and-space-mode="label-alignment">
    <style:list-level-label-alignment text:label-followed-by="listtab" text:list-tab-stop-position="0.6cm"
     fo:text-indent="-0.4cm" fo:margin-left="0.6cm"/></style:list-level-properties>
  </text:list-level-style-bullet></text:list-style>
 <text:list-style style:name="Numbers">
  <text:list-level-style-number text:level="1" style:num-format="1" style:num-suffix=".">
   <style:list-level-properties text:list-level-position-and-space-mode="label-alignment">
    <style:list-level-label-alignment text:label-followed-by="listtab" text:list-tab-stop-position="0.7cm"
     fo:text-indent="-0.5cm" fo:margin-left="0.7cm"/></style:list-level-properties>
  </text:list-level-style-number></text:list-style>
</office:styles>
<office:automatic-styles>
 <style:page-layout style:name="pm1">
  <style:page-layout-properties fo:page-width="21cm" fo:page-height="29.7cm" fo:margin-top="1.2cm"
   fo:margin-bottom="1.2cm" fo:margin-left="2cm" fo:margin-right="2cm">
   <style:columns fo:column-count="{cols}" fo:column-gap="0.8cm"/></style:page-layout-properties>
  <style:header-style><style:header-footer-properties fo:min-height="0.6cm" fo:margin-bottom="0.5cm"/></style:header-style>
  <style:footer-style><style:header-footer-properties fo:min-height="0.6cm" fo:margin-top="0.5cm"/></style:footer-style>
 </style:page-layout>
 <style:style style:name="PB" style:family="paragraph" style:parent-style-name="Heading_20_2">
  <style:paragraph-properties fo:break-before="page"/></style:style>
 <style:style style:name="PBT" style:family="paragraph" style:parent-style-name="Title">
  <style:paragraph-properties fo:break-before="page"/></style:style>
 <style:style style:name="Tbl" style:family="table"><style:table-properties table:align="left" fo:margin-top="0.1cm" fo:margin-bottom="0.3cm"/></style:style>
 <style:style style:name="CR" style:family="table-cell"><style:table-cell-properties fo:padding="0.06cm" fo:border="0.5pt solid #000000"/></style:style>
 <style:style style:name="CB" style:family="table-cell"><style:table-cell-properties fo:padding="0.06cm" fo:border="none"/></style:style>
 <style:style style:name="CBH" style:family="table-cell"><style:table-cell-properties fo:padding="0.06cm" fo:border="none" fo:border-bottom="0.5pt solid #000000"/></style:style>
</office:automatic-styles>
<office:master-styles>
 <style:master-page style:name="Standard" style:page-layout-name="pm1">
  <style:header><text:p text:style-name="Furniture">{header}</text:p></style:header>
  <style:footer><text:p text:style-name="Furniture">{footer}</text:p></style:footer>
 </style:master-page>
</office:master-styles>
<office:body><office:text>
"""


def fodt_source(doc: Doc) -> str:
    from xml.sax.saxutils import escape as x

    font, size, align = {"serif": ("Liberation Serif", "11pt", "justify"), "sans": ("Liberation Sans", "10pt", "start"),
                         "narrow": ("DejaVu Sans", "9pt", "start")}[doc.style]
    footer = x(doc.footer).replace("{n}", '<text:page-number text:select-page="current">1</text:page-number>').replace(
        "{m}", f"<text:page-count>{len(doc.pages)}</text:page-count>")
    out = [FODT_HEAD.format(font=font, size=size, align=align, cols=doc.columns, header=x(doc.header), footer=footer,
                            falign="end" if doc.style == "serif" else "center")]
    for i, page in enumerate(doc.pages):
        for k, b in enumerate(page):
            brk = i > 0 and k == 0
            if b.kind == "title":
                out.append(f'<text:p text:style-name="{"PBT" if brk else "Title"}">{x(b.text)}</text:p>')
            elif b.kind == "h":
                out.append(f'<text:h text:style-name="{"PB" if brk else "Heading_20_2"}" text:outline-level="2">'
                           f"{x(b.text)}</text:h>")
            elif b.kind == "p":
                out.append(f'<text:p text:style-name="Standard">{x(b.text)}</text:p>')
            elif b.kind == "caption":
                out.append(f'<text:p text:style-name="Caption">{x(b.text)}</text:p>')
            elif b.kind in ("ul", "ol"):
                style = "Bullets" if b.kind == "ul" else "Numbers"
                out.append(f'<text:list text:style-name="{style}">' + "".join(
                    f'<text:list-item><text:p text:style-name="Standard">{x(t)}</text:p></text:list-item>'
                    for t in b.items) + "</text:list>")
            elif b.kind == "code":
                for line in b.items:
                    lead = len(line) - len(line.lstrip(" "))
                    sp = f'<text:s text:c="{lead}"/>' if lead else ""
                    out.append(f'<text:p text:style-name="Code">{sp}{x(line.lstrip(" "))}</text:p>')
            elif b.kind == "table":
                n = len(b.rows[0])
                t = [f'<table:table table:name="T{i}_{k}" table:style-name="Tbl">',
                     f'<table:table-column table:number-columns-repeated="{n}"/>']
                for r, row in enumerate(b.rows):
                    cell = "CR" if b.ruled else ("CBH" if r == 0 else "CB")
                    pst = "Cellhead" if r == 0 else "Cell"
                    t.append("<table:table-row>" + "".join(
                        f'<table:table-cell table:style-name="{cell}" office:value-type="string">'
                        f'<text:p text:style-name="{pst}">{x(c)}</text:p></table:table-cell>' for c in row)
                             + "</table:table-row>")
                t.append("</table:table>")
                out.append("".join(t))
    out.append("</office:text></office:body></office:document>\n")
    return "\n".join(out)


def make_lo(doc: Doc, work: Path) -> Path:
    src = work / f"{doc.id}.fodt"
    src.write_text(fodt_source(doc), encoding="utf-8")
    profile = work / "lo-profile"
    r = subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf",
                        "--outdir", str(work), str(src)], capture_output=True, text=True, timeout=180)
    pdf = work / f"{doc.id}.pdf"
    if not pdf.exists():
        raise RuntimeError(f"soffice failed for {doc.id}: {r.stdout[-800:]} {r.stderr[-800:]}")
    return pdf


# ---------------------------------------------------------------------------------------------------------------
# Checking a render against its blocks, and scanning


def _squash(s: str) -> str:
    """Letters and digits only, lower case: survives hyphenation, ligatures, line breaks and list markers."""
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFKC", s).lower() if ch.isalnum())


def block_keys(b: Block) -> list[str]:
    if b.kind in ("title", "h", "p", "caption"):
        return [_squash(b.text)[:30], _squash(b.text)[-30:]]
    if b.kind in ("ul", "ol", "code"):
        return [_squash(b.items[0])[:30], _squash(b.items[-1])[-30:]]
    if b.kind == "table":
        return [_squash(" ".join(b.rows[0])), _squash(b.rows[-1][-1])]
    return []


def misplaced_page(doc: Doc, pdf: Path) -> int | None:
    """The first page whose blocks are not all on that PDF page (or None when the render matches)."""
    import pypdfium2 as pdfium

    pdfdoc = pdfium.PdfDocument(str(pdf))
    try:
        texts = [_squash(p.get_textpage().get_text_range().replace("\ufffe", "-")) for p in pdfdoc]
    finally:
        pdfdoc.close()
    for i, page in enumerate(doc.pages):
        if i >= len(texts):
            return len(doc.pages) - 1
        for b in page:
            if not all(k in texts[i] for k in block_keys(b)):
                return i
    if len(texts) != len(doc.pages):
        return len(doc.pages) - 1
    return None


def render_doc(doc: Doc, out_pdf: Path, work: Path, chromium: Chromium | None) -> list[str]:
    """Render, then shorten pages that overflowed until every block sits on its page. Returns notes."""
    notes = []
    for attempt in range(8):
        if doc.source == "latex":
            pdf = make_latex(doc, work)
        elif doc.source == "lo":
            pdf = make_lo(doc, work)
        else:
            pdf = chromium.pdf(doc, work / f"{doc.id}.pdf")
        bad = misplaced_page(doc, pdf)
        if bad is None:
            shutil.copy(pdf, out_pdf)
            return notes
        # Drop the last droppable block of the overflowing page (never the title or first heading/paragraph).
        page = doc.pages[bad]
        if len(page) <= 3:
            raise RuntimeError(f"{doc.id}: page {bad + 1} does not fit even with 3 blocks")
        dropped = page.pop()
        while len(page) > 3 and page[-1].kind in ("h", "caption"):
            page.pop()
        notes.append(f"{doc.id} p{bad + 1}: overflow, dropped a {dropped.kind} block (attempt {attempt + 1})")
    raise RuntimeError(f"{doc.id}: could not fit pages after 8 attempts")


def scan_page(img, seed: int, dpi: int = 200, heavy: bool = False):
    """A scan-like copy of a page render: slight rotation, blur, sensor noise, JPEG. Deterministic per seed.
    `heavy`: a worse scanner or a photocopy of a copy (more blur, noise and compression, less contrast)."""
    import numpy as np
    from PIL import Image, ImageFilter

    rng = random.Random(seed)
    img = img.convert("L")
    img = img.rotate(rng.uniform(-1.2, 1.2), resample=Image.BICUBIC, expand=False, fillcolor=255)
    img = img.filter(ImageFilter.GaussianBlur(rng.uniform(1.0, 1.3) if heavy else rng.uniform(0.5, 0.9)))
    arr = np.asarray(img, dtype=np.float32)
    # Paper is never pure white, and toner is never pure black.
    ink = rng.uniform(0.6, 0.75) if heavy else rng.uniform(0.8, 0.92)
    arr = 235 - (255 - arr) * ink * (235 / 255)
    arr = arr + np.random.default_rng(seed).normal(0, rng.uniform(12, 16) if heavy else rng.uniform(6, 11), arr.shape)
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=rng.randint(35, 50) if heavy else rng.randint(55, 75), dpi=(dpi, dpi))
    return buf.getvalue()
