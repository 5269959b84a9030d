"""Peer corpus, content: the blocks of each page, their perfect Markdown, plain-text truth and olmOCR-Bench tests."""

from __future__ import annotations

import html
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

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
