"""Structure, repetition and format terms: is the output well formed, loop free and in the house style."""

from __future__ import annotations

import re
import string
import zlib
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from minuscule.markup.text import trailing_repeats
from minuscule.rewards.config import TermScore
from minuscule.rewards.latex import latex_problems
from minuscule.rewards.page import PageParts, split_page

# Chat-template and grounding tokens of DeepSeek-OCR-style models (`<|ref|>`, `<|det|>`,
# `<|grounding|>`, `<｜end▁of▁sentence｜>`): never part of a transcription.
_SPECIAL = re.compile(r"<\|[^|<>\n]{1,40}\|>|<\uff5c[^\uff5c<>\n]{1,40}\uff5c>")
_SPECIAL_END = re.compile(f"(?:{_SPECIAL.pattern})$")
_TABLE_PART = re.compile(r"<(/?)(table|thead|tbody|tfoot|tr|td|th)\b[^>]*>", re.IGNORECASE)
_ALNUM_LINE = re.compile(r"^[^\n]*?[^\W_][^\n]*", re.MULTILINE)
_PUNCTUATION = string.punctuation
_STRAY_DELIMS = re.compile(r"(?<!\\)\$|\\\(|\\\)|(?<!\\)\\\[|(?<!\\)\\\]")


def _table_units(markdown: str) -> tuple[int, list[str]]:
    """(number of outermost HTML tables, problems): each table with a tag left open or closed out
    of order is one problem, so is each table tag outside any table."""
    stack: list[str] = []
    tables, problems = 0, []
    broken = False
    for closing, name in _TABLE_PART.findall(markdown):
        name = name.lower()
        if not closing:
            if name == "table" and not stack:
                tables, broken = tables + 1, False
            elif not stack:
                problems.append(f"<{name}> outside a table")
                continue
            stack.append(name)
            continue
        if not stack:
            problems.append(f"</{name}> outside a table")
            continue
        if stack[-1] != name:
            if not broken:
                problems.append(f"table {tables}: </{name}> closes <{stack[-1]}>")
            broken = True
            if name not in stack:
                continue
            while stack[-1] != name:  # recover: close what was left open
                stack.pop()
        stack.pop()
    if stack and not broken:
        problems.append(f"table {tables}: <{stack[-1]}> never closed")
    return tables, problems


@lru_cache(maxsize=8192)
def _formula_problems(latex: str) -> tuple[str, ...]:
    """latex_problems, once per formula body (most formulas of an output are the reference's)."""
    return tuple(latex_problems(latex))


def _elements(page: PageParts) -> tuple[int, list[str]]:
    """(valid elements, problems) of a page, one problem per malformed element."""
    bad: list[str] = []
    n_valid = 0
    for f in page.formulas:
        problems = _formula_problems(f.latex)
        if problems:
            bad.append(f"formula {f.latex[:30]!r}: {problems[0]}")
        else:
            n_valid += 1
    n_tables, table_problems = _table_units(page.raw)
    n_valid += n_tables - sum(1 for p in table_problems if p.startswith("table "))
    bad.extend(table_problems)
    bad.extend(f"unpaired math delimiter {d!r}" for d in _STRAY_DELIMS.findall(page.prose))
    bad.extend(f"stray token {t!r}" for t in _SPECIAL.findall(page.raw))
    return n_valid, bad


@lru_cache(maxsize=256)
def _own_problems(reference: str) -> tuple[str, ...]:
    """The reference's own malformed elements (a GRPO group scores many outputs against one reference)."""
    return tuple(_elements(split_page(reference))[1])


def structure_term(pred: PageParts, ref: PageParts | None = None) -> TermScore:
    r"""s = valid / (valid + malformed) elements. Elements: each formula (valid when its braces,
    `\begin`/`\end` and `\left`/`\right` balance), each HTML table (valid when every tag is
    closed in order), and as malformed elements each math delimiter left unpaired, each table tag
    outside a table and each grounding/chat token. Problems the reference has itself (say, a `$`
    for dollars) are not counted. No elements: 1."""
    n_valid, bad = _elements(pred)
    if ref is not None and bad:
        allowed = Counter(_own_problems(ref.raw))
        kept = []
        for problem in bad:
            if allowed[problem] > 0:
                allowed[problem] -= 1
            else:
                kept.append(problem)
        bad = kept
    total = n_valid + len(bad)
    if total == 0:
        return TermScore(1.0)
    note = f"{len(bad)} of {total} elements malformed: " + "; ".join(bad[:3]) if bad else ""
    return TermScore(n_valid / total, True, note)


@lru_cache(maxsize=1024)
def _profile(markdown: str) -> tuple[Counter, Counter, float]:
    """Line counts, word 4-gram counts and zlib compression ratio of a text."""
    # Lines without a letter or digit and words of punctuation only (`$$`, `</table>`, `| --- |`) are markup that
    # legitimately recurs; a loop of them still shows in the compression ratio and the tail.
    lines = Counter(line.strip() for line in _ALNUM_LINE.findall(markdown))
    words = markdown.split()
    marks = {w for w in set(words) if not w.strip(_PUNCTUATION)}  # each distinct word tested once
    if marks:
        words = [w for w in words if w not in marks]
    grams = Counter(zip(words, words[1:], words[2:], words[3:]))
    data = markdown.encode("utf-8")
    ratio = len(data) / len(zlib.compress(data)) if data else 1.0
    return lines, grams, ratio


def _excess(pred: Counter, ref: Counter) -> tuple[float, str]:
    """Share of the prediction's items that repeat beyond max(1, the reference's count), and the worst."""
    total = sum(pred.values())
    if total == len(pred):  # nothing occurs twice
        return 0.0, ""
    extra, worst, worst_n = 0, "", 0
    for item, n in pred.most_common():  # sorted in C; only the repeated items are visited
        if n == 1:
            break
        over = n - max(1, ref.get(item, 0))
        if over > 0:
            extra += over
            if over > worst_n:
                worst, worst_n = item, over
    return extra / total, worst


def repetition_term(pred: PageParts, ref: PageParts, cr_ok: float = 1.5, cr_max: float = 2.5, tail_limit: int = 30) -> TermScore:
    """s = (1 - x)^2 * g * t, where
    x = max(share of lines, share of word 4-grams repeated beyond their count in the reference),
    g = clip((cr_max - c) / (cr_max - cr_ok), 0, 1), c = zlib ratio of prediction / of reference,
    t = 0 when a 1..5-character n-gram repeats more than max(tail_limit, reference's) times at the
    very end (the generation looped into the token limit), else 1. No loop: 1."""
    p_lines, p_grams, p_cr = _profile(pred.raw)
    r_lines, r_grams, r_cr = _profile(ref.raw)
    line_x, line_worst = _excess(p_lines, r_lines)
    gram_x, _ = _excess(p_grams, r_grams)
    x = max(line_x, gram_x)
    c = p_cr / r_cr if r_cr > 0 else 1.0
    g = min(1.0, max(0.0, (cr_max - c) / (cr_max - cr_ok)))
    tail = _tail_repeats(pred.raw)
    looped = tail > max(tail_limit, _tail_repeats_cached(ref.raw))
    s = (1.0 - x) ** 2 * g * (0.0 if looped else 1.0)
    notes = []
    if line_x > 0.02:
        notes.append(f"{line_x:.0%} of lines repeat (e.g. {line_worst[:40]!r})")
    elif gram_x > 0.02:
        notes.append(f"{gram_x:.0%} of word 4-grams repeat")
    if g < 1.0:
        notes.append(f"compression ratio {c:.2f}x the reference's")
    if looped:
        notes.append(f"ends with {tail} back-to-back repeats (ran into the token limit)")
    return TermScore(s, True, "; ".join(notes))


@lru_cache(maxsize=256)
def _tail_repeats_cached(reference: str) -> int:
    return _tail_repeats(reference)


def _tail_repeats(text: str, window: int = 1024) -> int:
    """Most back-to-back repeats of the text's final 1..5 characters, read in its last `window`
    characters (enough to see any count up to window/5, far above the limits used)."""
    return max(trailing_repeats(text[-window:], 5))


_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-\u2013\u2014]?\s*\d{1,4}\s*(?:(?:/|of)\s*\d{1,4})?\s*[-\u2013\u2014]?$", re.IGNORECASE)
_IMAGES = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)|<img\b|<figure\b|^\s*\[(?:image|figure)[^\]\n]*\]", re.IGNORECASE | re.MULTILINE)
_BAD_MATH = re.compile(r"\\begin\{(?:equation|align|gather|multline|eqnarray|displaymath)\*?\}|```\s*(?:math|latex)|<math\b")


class _FormatFacts(NamedTuple):
    bad_math: int
    lines: frozenset[str]
    images: int
    end: str


@lru_cache(maxsize=256)
def _reference_format(reference: str) -> _FormatFacts:
    """What format_term reads from the reference, once per reference."""
    ref = split_page(reference)
    return _FormatFacts(len(_BAD_MATH.findall(ref.prose)), frozenset(line.strip() for line in ref.raw.split("\n")),
                        len(_IMAGES.findall(ref.raw)), _unclean_end(ref))


def format_term(pred: PageParts, ref: PageParts) -> TermScore:
    """s = h * m * 0.5^f * 0.5^i * e: h = HTML tables / all tables (pipe tables break the
    convention); m = delimited formulas / (those + bare `\\begin{equation}`-style environments,
    ```math fences, <math> tags); f = page-number lines first or last; i = image tags or
    descriptions; e = 0.5 unless the output ends cleanly (not empty, no table or `$$` left open,
    no chat token at the end). What the reference does itself is not held against the prediction."""
    factors: list[tuple[float, str]] = []
    n_html, n_pipe = len(pred.html_table_spans), max(0, pred.pipe_tables - ref.pipe_tables)
    if n_pipe:
        factors.append((n_html / (n_html + n_pipe), f"{n_pipe} pipe table(s) instead of HTML"))
    facts = _reference_format(ref.raw)
    bad_math = len(_BAD_MATH.findall(pred.prose)) - facts.bad_math
    if bad_math > 0:
        factors.append((len(pred.formulas) / (len(pred.formulas) + bad_math), f"{bad_math} formula(s) without $/\\( \\)/$$/\\[ \\] delimiters"))
    lines = [line.strip() for line in pred.raw.split("\n") if line.strip()]
    edges = lines[:2] + lines[-2:] if len(lines) > 4 else lines
    furniture = [line for line in dict.fromkeys(edges) if _PAGE_NUMBER.match(line) and line not in facts.lines]
    if furniture:
        factors.append((0.5 ** len(furniture), f"page number line(s) {furniture[:2]}"))
    images = len(_IMAGES.findall(pred.raw)) - facts.images
    if images > 0:
        factors.append((0.5**images, f"{images} image tag(s)/description(s)"))
    end = _unclean_end(pred)
    if end and end != facts.end:
        factors.append((0.5, end))
    s = 1.0
    for value, _ in factors:
        s *= value
    return TermScore(s, True, "; ".join(why for _, why in factors))


def _unclean_end(pred: PageParts) -> str:
    text = pred.raw.rstrip()
    if not text:
        return "empty output"
    if pred.html_table_spans and not pred.html_table_spans[-1][2]:
        return "ends inside an open table"
    if _SPECIAL_END.search(text):
        return "ends with a chat/grounding token"
    if pred.prose.count("$$") % 2:
        return "a $$ formula is never closed"
    return ""
