"""Page content from Faker in several locales: headings, prose with inline math, lists, tables, formulas."""

from __future__ import annotations

import random
import re
from functools import lru_cache

from minuscule.synth.blocks import (
    Block, Cell, Figure, Footnote, Formula, Heading, ListBlock, Paragraph, Sentence, Span, Table,
)
from minuscule.synth.figures import svg_chart
from minuscule.synth.formulas import FormulaMaker

# Locales whose Faker lorem provider has real word lists, in Latin, Cyrillic and Greek scripts
# (every font we use covers them; CJK is left out because olmOCR's baseline test rejects it).
LOCALES = ("en_US", "en_US", "en_US", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL", "cs_CZ",
           "da_DK", "ru_RU", "el_GR", "la")
DECIMAL_COMMA = {"de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL", "cs_CZ", "da_DK", "ru_RU", "el_GR"}

# Characters that Markdown, HTML or the checks' normalisation would change: never let them into text.
_UNSAFE = re.compile(r"[&<>$_*|#\\`~^{}\[\]\"'\u2018\u2019\u201c\u201d]")
_SPACES = re.compile(r"\s+")

UNITS = ["%", "ms", "kg", "mm", "GB", "h", "s", "K", "MHz", "kW", "m", "km"]
METRICS_EN = ["Accuracy", "Precision", "Recall", "Latency", "Throughput", "Error", "Mean", "Median",
              "Std", "Total", "Share", "Count", "Score", "Rate", "Growth", "Cost", "Volume", "Change"]


@lru_cache(maxsize=None)
def _faker(locale: str):
    from faker import Faker

    fake = Faker(locale)
    # Some providers build their word lists from sets (it_IT cities), so which element a seed
    # picks would depend on PYTHONHASHSEED and differ between processes. Sorting every list of
    # strings gives them a fixed order; uniform picks keep their distribution.
    for provider in fake.get_providers():
        seen: set[str] = set()
        for klass in type(provider).__mro__:
            for name, value in vars(klass).items():
                if name in seen:
                    continue
                seen.add(name)
                if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                    setattr(provider, name, sorted(value))
    return fake


def clean(text: str) -> str:
    return _SPACES.sub(" ", _UNSAFE.sub("", text)).strip()


class ContentMaker:
    """Generates blocks for one page from a seed; the Faker instance is re-seeded per page."""

    def __init__(self, rng: random.Random, locale: str):
        self.rng = rng
        self.locale = locale
        self.fake = _faker(locale)
        self.fake.seed_instance(rng.getrandbits(32))
        self.formulas = FormulaMaker(rng)
        self.footnotes: list[Footnote] = []

    # ---- words and numbers -------------------------------------------------------------
    def words(self, n: int) -> list[str]:
        out = [clean(w) for w in self.fake.words(n)]
        return [w for w in out if w] or ["data"]

    def decimal(self, lo: float, hi: float, places: int) -> str:
        s = f"{self.rng.uniform(lo, hi):.{places}f}"
        return s.replace(".", ",") if self.locale in DECIMAL_COMMA else s

    def entity(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            return clean(self.fake.name())
        if r < 0.45:
            return clean(self.fake.city())
        if r < 0.6:
            return str(self.rng.randint(1950, 2030))
        if r < 0.8:
            return f"{self.decimal(0, 500, self.rng.randint(0, 2))} {self.rng.choice(UNITS)}"
        if r < 0.9:
            return clean(self.fake.company())
        return f"{self.rng.randint(2, 999)}"

    def title(self, lo: int = 2, hi: int = 7) -> str:
        w = self.words(self.rng.randint(lo, hi))
        return " ".join([w[0].capitalize()] + w[1:])

    # ---- sentences ----------------------------------------------------------------------
    def plain_sentence(self, lo: int = 6, hi: int = 18) -> str:
        words = self.words(self.rng.randint(lo, hi))
        if self.rng.random() < 0.45:
            words.insert(self.rng.randint(1, len(words)), self.entity())
        if self.rng.random() < 0.25 and len(words) > 6:
            words[self.rng.randint(2, len(words) - 2)] += ","
        text = " ".join(words)
        end = self.rng.choices([".", "?", ";", ":"], weights=[20, 1, 1, 1])[0] if self.rng.random() < 0.9 else "."
        return text[0].upper() + text[1:] + end

    def sentence(self, math_p: float) -> Sentence:
        text = self.plain_sentence()
        r = self.rng.random()
        if r < math_p:
            words = text.split(" ")
            cut = self.rng.randint(2, max(2, len(words) - 1))
            head, tail = " ".join(words[:cut]), " ".join(words[cut:])
            spans = [Span("text", head), Span("math", self.formulas.inline())]
            if tail:
                spans.append(Span("text", tail))
            else:
                spans.append(Span("text", "."))
            return tuple(spans)
        if r < math_p + 0.06:
            words, end = text[:-1].split(" "), text[-1]
            i = self.rng.randint(0, len(words) - 1)
            word = words[i]
            spans: list[Span] = [Span("text", " ".join(words[:i]))] if i else []
            spans.append(Span(self.rng.choice(["bold", "italic"]), word.rstrip(",")))
            tail = ("," if word.endswith(",") else "") + "".join(" " + w for w in words[i + 1:]) + end
            spans.append(Span("text", tail.strip()))
            return tuple(spans)
        return (Span("text", text),)

    # ---- blocks -------------------------------------------------------------------------
    def paragraph(self, math_p: float = 0.2) -> Paragraph:
        sentences = [self.sentence(math_p) for _ in range(self.rng.randint(2, 7))]
        if self.rng.random() < 0.07 and len(self.footnotes) < 2:
            number = len(self.footnotes) + 1
            self.footnotes.append(Footnote(number, self.plain_sentence(5, 14)))
            last = sentences[-1]
            sentences[-1] = last + (Span("sup", str(number)),)
        return Paragraph(tuple(sentences))

    def list_block(self) -> ListBlock:
        n = self.rng.randint(2, 6)
        items = tuple(self.sentence(0.08) if self.rng.random() < 0.5 else (Span("text", self.plain_sentence(3, 10)),)
                      for _ in range(n))
        return ListBlock(ordered=self.rng.random() < 0.45, items=items)

    def heading(self, level: int, number: str = "") -> Heading:
        text = self.title(2, 6)
        return Heading(level, f"{number} {text}".strip())

    def formula(self) -> Formula:
        latex = self.formulas.display()
        if self.rng.random() < 0.25:
            # Numbered equations, as in papers; KaTeX prints the tag at the right margin.
            latex += f" \\tag{{{self.rng.randint(1, 40)}}}"
        return Formula(latex)

    def figure(self) -> Figure:
        label = self.rng.choice(["Figure", "Fig.", "Figure"])
        caption = f"{label} {self.rng.randint(1, 12)}: {self.plain_sentence(4, 12)}"
        return Figure(svg_chart(self.rng), caption, round(self.rng.uniform(0.6, 1.0), 2),
                      float(self.rng.randint(55, 110)))

    def table(self, max_cols: int) -> Table:
        """A table with header rows, numeric and text cells, and sometimes grouped columns or rows."""
        rng = self.rng
        n_cols = rng.randint(3, max(3, max_cols))
        n_rows = rng.choice([rng.randint(3, 6), rng.randint(5, 10), rng.randint(8, 16)])
        label_kind = rng.choice(["words", "names", "cities", "years"])
        col_kinds = [rng.choice(["int", "dec", "pct", "text", "dec", "int"]) for _ in range(n_cols - 1)]
        metric_names = METRICS_EN if self.locale.startswith("en") else None
        headers = []
        for _ in col_kinds:
            name = rng.choice(metric_names) if metric_names and rng.random() < 0.6 else self.title(1, 2)
            headers.append(name)
        headers = _dedupe(headers)
        rows: list[tuple[Cell, ...]] = []
        grouped_cols = n_cols >= 5 and rng.random() < 0.4
        if grouped_cols:
            # A two-level header: the first column spans both header rows, the others are grouped.
            groups: list[Cell] = [Cell(self.title(1, 2), True, rowspan=2)]
            left = n_cols - 1
            while left > 0:
                span = min(left, rng.randint(2, 3))
                groups.append(Cell(self.title(1, 3), True, colspan=span))
                left -= span
            rows.append(tuple(groups))
            rows.append(tuple(Cell(h, True) for h in headers))
        else:
            rows.append((Cell(self.title(1, 2), True),) + tuple(Cell(h, True) for h in headers))
        grouped_rows = rng.random() < 0.3 and n_rows >= 4
        r = 0
        used_labels: set[str] = set()
        while r < n_rows:
            cells: list[Cell] = []
            span = 1
            if grouped_rows and rng.random() < 0.4 and r + 1 < n_rows:
                span = min(n_rows - r, rng.randint(2, 3))
            label = self._label(label_kind, used_labels)
            cells.append(Cell(label, False, rowspan=span))
            for k in range(span):
                row = list(cells) if k == 0 else []
                row.extend(Cell(self._cell(kind), False) for kind in col_kinds)
                rows.append(tuple(row))
                cells = []
            r += span
        caption = ""
        if rng.random() < 0.6:
            caption = f"{rng.choice(['Table', 'Tab.', 'Table'])} {rng.randint(1, 9)}: {self.plain_sentence(4, 10)}"
        style = rng.choice(["grid", "ruled", "borderless", "striped", "grid", "ruled"])
        return Table(tuple(rows), caption, style, n_cols)

    def _label(self, kind: str, used: set[str]) -> str:
        for _ in range(20):
            if kind == "names":
                s = clean(self.fake.last_name())
            elif kind == "cities":
                s = clean(self.fake.city())
            elif kind == "years":
                s = str(self.rng.randint(1990, 2030))
            else:
                s = self.title(1, 2)
            if s and s not in used:
                used.add(s)
                return s
        return f"{self.title(1, 1)} {len(used) + 1}"

    def _cell(self, kind: str) -> str:
        rng = self.rng
        if rng.random() < 0.04:
            return rng.choice(["-", "n/a", "0"])
        if kind == "int":
            return f"{rng.randint(0, 99999):,}".replace(",", " " if self.locale in DECIMAL_COMMA else ",")
        if kind == "dec":
            return self.decimal(0, 100, rng.randint(1, 3))
        if kind == "pct":
            return f"{self.decimal(-40, 99, 1)} %"
        return self.title(1, 3)


def _dedupe(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} {seen[n]}")
    return out


def make_blocks(maker: ContentMaker, budget_lines: float, line_chars: float, max_table_cols: int,
                small_table_cols: int, title: bool) -> list[Block]:
    """A flow of blocks about `budget_lines` lines long (more than fits; the renderer trims the end).

    Tables and formulas come early and often, so trimming rarely removes all of them. Most tables
    fit one column (`small_table_cols`); the others span the page (`max_table_cols`).
    """
    rng = maker.rng
    blocks: list[Block] = []
    used = 0.0

    def cost(block: Block) -> float:
        if isinstance(block, Paragraph):
            chars = sum(len(sp.text) + 1 for s in block.sentences for sp in s)
            return chars / line_chars + 1
        if isinstance(block, ListBlock):
            return sum(1 + sum(len(sp.text) for sp in it) / line_chars for it in block.items) + 1
        if isinstance(block, Table):
            return len(block.rows) * 1.4 + (2 if block.caption else 1)
        if isinstance(block, Formula):
            return 5 if "begin" in block.latex or "frac" in block.latex else 3
        if isinstance(block, Figure):
            return 14
        return 2.5

    if title:
        blocks.append(maker.heading(1))
        used += 3
    section = rng.randint(1, 6)
    sub = 0
    # The first section always holds a table and a formula (in either order), so that trimming the
    # page end rarely leaves a page without both; later sections draw kinds at random.
    forced = ["table", "formula"]
    rng.shuffle(forced)
    first = True
    while used < budget_lines:
        if first or (not forced and rng.random() < 0.35):
            if rng.random() < 0.3 and not first:
                sub += 1
                head = maker.heading(3, f"{section}.{sub}" if rng.random() < 0.7 else "")
            else:
                section += 1
                sub = 0
                head = maker.heading(2, f"{section}." if rng.random() < 0.6 else "")
            blocks.append(head)
            used += cost(head)
        first = False
        if forced and (len(forced) == 1 or rng.random() < 0.6):
            kind = forced.pop(0)
        else:
            kind = rng.choices(["paragraph", "formula", "table", "list", "figure"], weights=[4, 2.2, 1.4, 0.7, 0.4])[0]
        if kind == "table":
            block: Block = maker.table(small_table_cols if rng.random() < 0.7 else max_table_cols)
        elif kind == "formula":
            block = maker.formula()
        elif kind == "list":
            block = maker.list_block()
        elif kind == "figure":
            block = maker.figure()
        else:
            block = maker.paragraph()
        blocks.append(block)
        used += cost(block)
        if kind in ("formula", "table") and rng.random() < 0.7:
            prose = maker.paragraph()
            blocks.append(prose)
            used += cost(prose)
    return blocks
