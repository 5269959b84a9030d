"""Build the peer-comparison corpus: LaTeX, LibreOffice and Chromium documents, scans of them, tests and truths.

    python benchmarks/peers/make_corpus.py out/peers            # everything (needs texlive, soffice, chromium)
    python benchmarks/peers/make_corpus.py out/peers --only chrome --small

Every page is made from blocks this script chose (headings, paragraphs, lists, tables, code), with a forced page
break between pages, so the content of each page is known. A render whose text layer does not show each block on
its own page is re-made with fewer blocks. The tests (olmOCR-Bench JSONL) and the plain-text truths come from the
blocks; each test must pass on the page's perfect Markdown or it is dropped.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from minuscule.bench.cer import plain_text  # noqa: E402
from minuscule.checks import parse_test  # noqa: E402
from minuscule.markup.text import normalize_text  # noqa: E402

# ---------------------------------------------------------------------------------------------------------------
# Content model


@dataclass
class Block:
    """One piece of a page. kind: title, h, p, caption, ul, ol, table, code."""

    kind: str
    text: str = ""
    items: list[str] = field(default_factory=list)  # list items or code lines
    rows: list[list[str]] = field(default_factory=list)  # table rows, the first is the heading row
    ruled: bool = True  # table with rules (grid or booktabs) vs borderless


@dataclass
class Doc:
    """A document: its maker, layout, running header/footer and the blocks of each page."""

    id: str
    source: str  # latex | lo | chrome
    columns: int
    header: str  # running header text ("" = none)
    footer: str  # footer format with {n} and {m}, e.g. "Page {n} of {m}"
    style: str  # a maker-specific variant (fonts, table rules)
    pages: list[list[Block]]
    scan: bool = False

    def footer_text(self, n: int) -> str:
        return self.footer.format(n=n, m=len(self.pages))


class Writer:
    """Deterministic realistic text from Faker plus hand-made tables and code."""

    def __init__(self, seed: int):
        from faker import Faker

        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.used: set[str] = set()

    def sentence(self, lo: int = 9, hi: int = 20) -> str:
        for _ in range(20):
            s = self.fake.sentence(nb_words=self.rng.randint(lo, hi), variable_nb_words=False)
            if s not in self.used:
                self.used.add(s)
                return s
        return s

    def paragraph(self, lo: int = 4, hi: int = 7) -> str:
        parts = []
        for _ in range(self.rng.randint(lo, hi)):
            r = self.rng.random()
            if r < 0.15:
                # A sentence with a name and a number: realistic prose is not only lorem words.
                parts.append(f"{self.fake.name()} reported {self.rng.randint(12, 980)} cases in "
                             f"{self.fake.city()} during {self.rng.randint(1995, 2024)}.")
            elif r < 0.25:
                parts.append(self.fake.catch_phrase().capitalize() + " " + self.sentence(6, 10).lower())
            else:
                parts.append(self.sentence())
        return " ".join(parts)

    def heading(self) -> str:
        words = self.fake.catch_phrase().split()[:4]
        return " ".join(w.capitalize() for w in words)

    def items(self, n: int) -> list[str]:
        return [self.sentence(6, 14) for _ in range(n)]

    def table(self, narrow: bool) -> list[list[str]]:
        kind = self.rng.choice(["people", "metrics", "budget"])
        n = self.rng.randint(4, 6)
        if kind == "people":
            rows = [["Name", "City", "Year", "Score"]]
            for _ in range(n):
                first, last = self.fake.first_name(), self.fake.last_name()
                rows.append([f"{first[0]}. {last}" if narrow else f"{first} {last}",
                             self.fake.city().split()[0][:11], str(self.rng.randint(1990, 2024)),
                             f"{self.rng.uniform(10, 99):.1f}"])
        elif kind == "metrics":
            rows = [["Method", "Precision", "Recall", "F1"]]
            names = self.rng.sample(["Baseline", "Greedy", "Beam", "Sampler", "Oracle", "Hybrid", "Sparse", "Dense",
                                     "Ranker", "Cascade"], n)
            for name in names:
                p, r = self.rng.uniform(0.5, 0.99), self.rng.uniform(0.5, 0.99)
                rows.append([name, f"{p:.3f}", f"{r:.3f}", f"{2 * p * r / (p + r):.3f}"])
        else:
            rows = [["Item", "Q1", "Q2", "Total"]]
            items = self.rng.sample(["Travel", "Hardware", "Licenses", "Salaries", "Rent", "Training", "Catering",
                                     "Shipping", "Insurance", "Marketing"], n)
            for item in items:
                a, b = self.rng.randint(100, 9999), self.rng.randint(100, 9999)
                rows.append([item, f"{a:,}", f"{b:,}", f"{a + b:,}"])
        if narrow:
            rows = [r[:3] for r in rows]
        return rows

    def code(self) -> list[str]:
        fn = self.rng.choice(["load_records", "score_batch", "merge_spans", "parse_header", "fit_model"])
        arg = self.rng.choice(["items", "rows", "pages", "values"])
        k = self.rng.randint(2, 9)
        return [
            f"def {fn}({arg}, limit={k}):",
            f"    total = 0",
            f"    for x in {arg}[:limit]:",
            f"        total += x * {k + 1}",
            f"    return total / {self.rng.randint(2, 12)}",
        ]


def block_chars(b: Block) -> int:
    """Rough space a block takes, in characters of running text."""
    if b.kind in ("p", "caption"):
        return len(b.text) + 60
    if b.kind in ("h", "title"):
        return 160
    if b.kind in ("ul", "ol"):
        return sum(len(i) + 60 for i in b.items) + 60
    if b.kind == "table":
        return len(b.rows) * 110 + 120
    if b.kind == "code":
        return len(b.items) * 90 + 80
    return 100


def make_pages(w: Writer, n_pages: int, budget: int, narrow_tables: bool, features: set[str]) -> list[list[Block]]:
    """Blocks for each page, about `budget` characters each, with the requested features spread over pages."""
    pages: list[list[Block]] = []
    todo = sorted(features)  # sorted: set order changes with the interpreter's hash seed
    w.rng.shuffle(todo)
    table_no = 0
    for i in range(n_pages):
        page: list[Block] = []
        used = 0
        if i == 0:
            page.append(Block("title", w.fake.catch_phrase().title()))
            used += 250
        page.append(Block("h", w.heading()))
        page.append(Block("p", w.paragraph()))
        used += block_chars(page[-1]) + block_chars(page[-2])
        # Each page gets at least one special block while any are left; the last page takes the rest.
        specials = todo[:1] if i < n_pages - 1 else todo
        todo = todo[len(specials):]
        for feat in specials:
            blocks: list[Block] = []
            if feat in ("ruled", "booktabs", "borderless"):
                table_no += 1
                blocks.append(Block("caption", f"Table {table_no}: {w.sentence(5, 9)}"))
                blocks.append(Block("table", rows=w.table(narrow_tables), ruled=feat != "borderless"))
                blocks[-1].text = feat
            elif feat == "ul":
                blocks.append(Block("ul", items=w.items(w.rng.randint(3, 4))))
            elif feat == "ol":
                blocks.append(Block("ol", items=w.items(w.rng.randint(3, 4))))
            elif feat == "code":
                blocks.append(Block("p", w.paragraph(2, 3)))
                blocks.append(Block("code", items=w.code()))
            for b in blocks:
                page.append(b)
                used += block_chars(b)
        while used < budget:
            b = Block("h", w.heading()) if w.rng.random() < 0.25 and page[-1].kind != "h" else Block("p", w.paragraph())
            page.append(b)
            used += block_chars(b)
        if page[-1].kind == "h":
            page.pop()
        pages.append(page)
    return pages


# ---------------------------------------------------------------------------------------------------------------
# Perfect Markdown, plain-text truth, tests


def block_markdown(b: Block) -> str:
    if b.kind == "title":
        return f"# {b.text}"
    if b.kind == "h":
        return f"## {b.text}"
    if b.kind in ("p", "caption"):
        return b.text
    if b.kind == "ul":
        return "\n".join(f"- {i}" for i in b.items)
    if b.kind == "ol":
        return "\n".join(f"{k}. {i}" for k, i in enumerate(b.items, 1))
    if b.kind == "code":
        return "```\n" + "\n".join(b.items) + "\n```"
    if b.kind == "table":
        head = "".join(f"<th>{html.escape(c)}</th>" for c in b.rows[0])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in b.rows[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    raise ValueError(b.kind)


def page_markdown(blocks: list[Block]) -> str:
    return "\n\n".join(block_markdown(b) for b in blocks) + "\n"


_BULLETS = re.compile(r"[•◦▪∙●■]")
_EMPHASIS = re.compile(r"(?<![\w*_])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*_])")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.M)


def cer_text(markdown: str) -> str:
    """What CER compares, the same for truth and every tool: plain_text (no Markdown markers, no HTML tags), and
    also no pipe-table rules or pipes, no emphasis markers and no bullet glyphs, which text-only tools print."""
    text = _TABLE_RULE.sub(" ", markdown)
    text = text.replace("|", " ").replace("**", "").replace("__", "")
    text = _EMPHASIS.sub(r"\2", text)
    text = _BULLETS.sub(" ", text)
    return plain_text(text)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def snippet(text: str, words: int = 6) -> str:
    return " ".join(text.split()[:words])


def make_tests(doc_key: str, page_no: int, blocks: list[Block], doc: Doc, rng: random.Random) -> list[dict]:
    """olmOCR-Bench records for one page, from the blocks that are on it."""
    tests: list[dict] = []

    def add(kind: str, **kw):
        tests.append({"pdf": doc_key, "page": page_no, "id": f"{doc_key}:{page_no}:{len(tests):02d}:{kind}",
                      "type": kind, **kw})

    add("baseline")
    for b in blocks:
        if b.kind in ("title", "h"):
            add("present", text=b.text, max_diffs=0)
        elif b.kind in ("p", "caption"):
            ss = [s for s in sentences(b.text) if 30 <= len(s) <= 140]
            for s in rng.sample(ss, min(2 if b.kind == "p" else 1, len(ss))):
                add("present", text=s, max_diffs=len(s) // 25)
        elif b.kind in ("ul", "ol"):
            for it in b.items[:3]:
                add("present", text=it, max_diffs=len(it) // 25)
        elif b.kind == "code":
            for line in (b.items[0], b.items[3]):
                add("present", text=line.strip(), max_diffs=1)
        elif b.kind == "table":
            body = b.rows[1:]
            ncol = len(b.rows[0])
            picks = rng.sample([(r, c) for r in range(len(body)) for c in range(1, ncol)], min(3, len(body) * (ncol - 1)))
            for r, c in picks:
                rel = {"top_heading": b.rows[0][c], "left": body[r][c - 1]}
                if r + 1 < len(body):
                    rel["down"] = body[r + 1][c]
                add("table", cell=body[r][c], max_diffs=0, **rel)
            add("table", cell=body[0][0], right=body[0][1], up=b.rows[0][0], max_diffs=0)
    # Reading order: each block's start comes before the next block's start (across columns too).
    starts = []
    for b in blocks:
        if b.kind in ("title", "h", "p", "caption"):
            starts.append(snippet(b.text))
        elif b.kind in ("ul", "ol"):
            starts.append(snippet(b.items[0]))
        elif b.kind == "code":
            starts.append(b.items[0])
    for a, c in zip(starts, starts[1:]):
        add("order", before=a, after=c, max_diffs=1)
    # A paragraph's first sentence comes before its last (a column break may fall in between).
    for b in blocks:
        if b.kind == "p":
            ss = sentences(b.text)
            if len(ss) >= 3:
                add("order", before=snippet(ss[0]), after=snippet(ss[-1]), max_diffs=1)
    if doc.header:
        add("absent", text=doc.header, max_diffs=0)
    if doc.footer.replace("{n}", "").replace("{m}", "").strip():
        add("absent", text=doc.footer_text(page_no), max_diffs=0)
    return tests


# A line-end hyphen: pdfium returns the renderer's break hyphen as U+FFFE glued to the next line; a hyphen
# glyph printed at the end of a line comes before a line break.
_BREAK = re.compile(r"([A-Za-z]+)(?:[\ufffe\u00ad]|-\r?\n)\r?\n?([A-Za-z]+)")


def hyphen_tests(doc_key: str, page_no: int, page_text: str, markdown: str, start: int) -> list[dict]:
    """`present` tests for words the renderer broke at a line end: a word that was split by hyphenation must
    come back whole, a compound with a real hyphen must keep it. Found from the PDF's own text layer."""
    # Within one block (one Markdown line) only, so the test does not also judge the order of blocks.
    lines = [plain_text(line) for line in markdown.splitlines() if line.strip()]
    tests: list[dict] = []
    for a, b in _BREAK.findall(page_text):
        for word, kind in ((a + b, "joined"), (f"{a}-{b}", "kept")):
            pat = re.compile(r"(?:^|(?<=\s))(\S+ " + re.escape(word) + r"\b\S*|" + re.escape(word) + r"\b\S* \S+)")
            m = next((m for line in lines if (m := pat.search(line))), None)
            if m and m.group(1) not in {t["text"] for t in tests}:
                tests.append({"pdf": doc_key, "page": page_no, "id": f"{doc_key}:{page_no}:h{start + len(tests):02d}:present",
                              "type": "present", "text": m.group(1), "max_diffs": 0, "checked": f"hyphen-{kind}"})
                break
    return tests[:6]


def self_check(tests: list[dict], markdown: str) -> tuple[list[dict], list[str]]:
    """Keep the tests that pass on the perfect Markdown; say why the others were dropped."""
    kept, dropped = [], []
    page = markdown
    seen_text = normalize_text(page)
    for t in tests:
        test = parse_test(t)
        # An order snippet that occurs twice on the page cannot tell the order apart.
        if t["type"] == "order" and (seen_text.count(test.before) != 1 or seen_text.count(test.after) != 1):
            dropped.append(f"{t['id']}: snippet not unique")
            continue
        res = test.run(page)
        if res.passed:
            kept.append(t)
        else:
            dropped.append(f"{t['id']}: {res.explanation}")
    return kept, dropped


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


# ---------------------------------------------------------------------------------------------------------------
# The corpus

# id, source, columns, pages, style, features, header, footer, scanned
PLAN = [
    ("latex-a", "latex", 2, 3, "cm", {"booktabs", "ul", "code", "ol"}, "Proceedings of the Northwind Workshop on Data Systems",
     "Page {n} of {m}", True),
    ("latex-b", "latex", 2, 3, "times", {"ruled", "ol", "borderless"}, "Journal of Applied Field Studies, Vol. 14",
     "{n}", True),
    ("latex-c", "latex", 1, 2, "palatino", {"borderless", "code", "ul"}, "Technical Report TR-2031: Internal Draft",
     "Draft page {n}", True),
    ("latex-d", "latex", 2, 2, "helvet", {"ruled", "ul"}, "Letters in Computational Methods", "Page {n} of {m}", False),
    ("lo-a", "lo", 1, 3, "serif", {"ruled", "ul", "ol", "borderless"}, "Harbor City Council - Quarterly Minutes",
     "Page {n} of {m}", True),
    ("lo-b", "lo", 2, 2, "sans", {"borderless", "ul"}, "Field Notes Newsletter", "Newsletter page {n}", False),
    ("lo-c", "lo", 1, 2, "narrow", {"ruled", "code"}, "Operations Handbook (Confidential)", "Page {n} of {m}", True),
    ("chrome-a", "chrome", 1, 3, "serif", {"ruled", "ul", "code"}, "Acme Analytics - Product Brief",
     "Page {n} of {m}", False),
    ("chrome-b", "chrome", 2, 3, "sans", {"ruled", "borderless", "ol", "code"}, "Weekly Engineering Digest",
     "Digest page {n} of {m}", True),
    ("chrome-c", "chrome", 3, 2, "narrow", {"ul", "borderless"}, "The Riverside Gazette - Local Edition",
     "Gazette page {n}", True),
    ("chrome-d", "chrome", 2, 2, "serif", {"ruled", "ul"}, "Annual Review of Process Engineering", "Page {n} of {m}",
     False),
]
BUDGET = {("latex", 2): 6600, ("latex", 1): 3600, ("lo", 1): 3000, ("lo", 2): 5200, ("chrome", 1): 3000,
          ("chrome", 2): 4400, ("chrome", 3): 4600}


def plan_docs(only: set[str] | None, small: bool, seed: int = 20261130) -> list[Doc]:
    docs, seen = [], set()
    for k, (doc_id, source, cols, n, style, feats, header, footer, scan) in enumerate(PLAN):
        if (only and source not in only) or (small and source in seen):
            continue
        seen.add(source)
        if small:
            n = min(n, 2)
        w = Writer(seed + 101 * k)
        narrow = cols >= 2 and source != "chrome" or cols == 3
        pages = make_pages(w, n, BUDGET[(source, cols)], narrow, set(feats))
        docs.append(Doc(doc_id, source, cols, header, footer, style, pages, scan))
    return docs


def build(out: Path, only: set[str] | None = None, small: bool = False, dpi: int = 200, log=print) -> dict:
    """Make the corpus under `out`: docs/*.pdf, scans/*.jpg, tests.jsonl, truth/, manifest.json."""
    import pypdfium2 as pdfium

    out.mkdir(parents=True, exist_ok=True)
    for sub in ("docs", "scans", "truth"):
        (out / sub).mkdir(exist_ok=True)
    docs = plan_docs(only, small)
    chromium = Chromium() if any(d.source == "chrome" for d in docs) else None
    manifest = {"docs": [], "notes": [], "dropped_tests": []}
    all_tests: list[dict] = []
    try:
        with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
            for doc in docs:
                work = Path(tmp) / doc.id
                work.mkdir()
                pdf_path = out / "docs" / f"{doc.id}.pdf"
                try:
                    manifest["notes"] += render_doc(doc, pdf_path, work, chromium)
                except (RuntimeError, FileNotFoundError, subprocess.TimeoutExpired) as exc:
                    manifest["notes"].append(f"{doc.id}: not made ({exc})")
                    log(f"skip {doc.id}: {exc}")
                    continue
                entries = [("docs/" + pdf_path.name, "text", [pdf_path.name])]
                pdfdoc = pdfium.PdfDocument(str(pdf_path))
                page_texts = [p.get_textpage().get_text_range() for p in pdfdoc]
                pdfdoc.close()
                if doc.scan:
                    pdfdoc = pdfium.PdfDocument(str(pdf_path))
                    names = []
                    for i, p in enumerate(pdfdoc):
                        img = p.render(scale=dpi / 72).to_pil()
                        name = f"{doc.id}-p{i + 1}.jpg"
                        (out / "scans" / name).write_bytes(scan_page(img, seed=hash_seed(doc.id, i), dpi=dpi,
                                                                         heavy=i % 2 == 1))
                        names.append(name)
                    pdfdoc.close()
                    entries.append((f"scans/{doc.id}", "scan", names))
                for key, kind, files in entries:
                    rng = random.Random(hash_seed(key, 0))
                    for n, blocks in enumerate(doc.pages, 1):
                        md = page_markdown(blocks)
                        stem = key.replace("/", "__") + f"_{n}"
                        (out / "truth" / f"{stem}.md").write_text(md)
                        (out / "truth" / f"{stem}.txt").write_text(cer_text(md) + "\n")
                        tests = make_tests(key, n, blocks, doc, rng) + hyphen_tests(key, n, page_texts[n - 1], md, 0)
                        kept, dropped = self_check(tests, md)
                        all_tests += kept
                        manifest["dropped_tests"] += dropped
                    manifest["docs"].append({"key": key, "id": doc.id, "source": doc.source, "kind": kind,
                                             "columns": doc.columns, "pages": len(doc.pages), "files": files})
                log(f"made {doc.id}: {len(doc.pages)} pages ({doc.source}, {doc.columns} col){' + scans' if doc.scan else ''}")
    finally:
        if chromium:
            chromium.close()
    with open(out / "tests.jsonl", "w") as f:
        for t in all_tests:
            f.write(json.dumps(t) + "\n")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def hash_seed(name: str, i: int) -> int:
    import zlib

    return zlib.crc32(f"{name}:{i}".encode())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="out/peers", help="output folder (default out/peers)")
    ap.add_argument("--only", default="", help="comma-separated makers to build: latex,lo,chrome")
    ap.add_argument("--small", action="store_true", help="one document per maker, at most 2 pages")
    ap.add_argument("--dpi", type=int, default=200, help="scan resolution (default 200)")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s} or None
    m = build(Path(args.out), only, args.small, args.dpi)
    n_tests = sum(1 for _ in open(Path(args.out) / "tests.jsonl"))
    print(f"{len(m['docs'])} document entries, {n_tests} tests, {len(m['dropped_tests'])} dropped by the self-check")
    for note in m["notes"]:
        print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
