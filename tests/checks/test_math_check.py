"""math: exact path without a browser, glyph matching on hand-made layouts, KaTeX in Chromium for the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minuscule.checks import MathRenderer, load_tests, parse_test, run_tests
from minuscule.checks.render import Glyph, RenderedFormula, glyphs_match, same_formula
from minuscule.errors import MissingExtraError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "bench-samples" / "olmocr-bench"
BASE = {"pdf": "p.pdf", "page": 1, "id": "t", "type": "math"}


class NoBrowser:
    """Stands in for the renderer where the exact-match path must decide alone."""

    def render_many(self, formulas):
        raise AssertionError("the renderer should not be needed")


def math(tex, **kw):
    return parse_test({**BASE, "math": tex, **kw})


def test_exact_match_needs_no_rendering():
    t = math(r"\frac{a}{b}")
    for page in (r"text $$\frac{a}{b}$$", r"$ \frac{a}{b} $", r"\[\frac{a}{b}\]", r"see \( \frac{a}{b}\) here"):
        assert t.run(page, renderer=NoBrowser()).passed


def test_no_formula_fails_without_rendering():
    r = math("x").run("plain text only", renderer=NoBrowser())
    assert not r.passed and "no formulas" in r.explanation


def test_ignore_dollar_delimited():
    t = math("x^2", ignore_dollar_delimited=True)
    assert t.run(r"\(x^2\)", renderer=NoBrowser()).passed
    assert not t.run("$x^2$", renderer=NoBrowser()).passed


def row(text, x=0.0, y=0.0, step=10.0):
    return [Glyph(ch, x + i * step, y, step, 10.0) for i, ch in enumerate(text)]


def test_glyph_matching_on_layouts():
    ab = tuple(row("ab"))
    assert glyphs_match(ab, tuple(row("xaby")))
    assert glyphs_match(ab, tuple(row("ab", x=300, y=50)))  # position on the page does not matter
    stacked = (Glyph("a", 0, 0, 10, 10), Glyph("b", 0, 30, 10, 10))  # b below a: a fraction-like layout
    assert not glyphs_match(ab, stacked)
    assert not glyphs_match(stacked, ab)
    assert not glyphs_match(tuple(row("abc")), tuple(row("ab")))  # a missing character
    assert not glyphs_match(tuple(row("aa")), tuple(row("a")))  # glyphs are used once
    # Within 5 px on the other axis counts as the same line.
    assert glyphs_match(ab, (Glyph("a", 0, 0, 10, 10), Glyph("b", 10, 4, 10, 10)))
    assert not glyphs_match(ab, (Glyph("a", 0, 0, 10, 10), Glyph("b", 10, 6, 10, 10)))


def test_same_formula_prefers_mathml_containment():
    ref = RenderedFormula("<mi>x</mi>", tuple(row("x")))
    hyp = RenderedFormula("<mrow><mi>x</mi><mo>+</mo></mrow>", ())
    assert same_formula(ref, hyp)  # contained, no glyphs needed
    assert not same_formula(RenderedFormula("<mi>y</mi>", tuple(row("y"))), hyp)


def test_multi_character_spans_are_split_evenly():
    f = RenderedFormula.from_raw("<mi>s</mi>", [["sin", 0.0, 0.0, 30.0, 12.0], [" ", 40, 0, 5, 5]])
    assert [(g.text, g.x, g.w) for g in f.glyphs] == [("s", 0.0, 10.0), ("i", 10.0, 10.0), ("n", 20.0, 10.0)]


@pytest.fixture(scope="module")
def renderer():
    r = MathRenderer()
    try:
        r.render("x")
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    yield r
    r.close()


# Verdicts of the published comparison on pairs from its own test-suite topics.
PAIRS = [
    ("a+b", "a + b", True),
    (r"\frac{a}{b}", "a / b", False),
    (r"\left[x\right]", r"\left\{x\right\}", False),
    (r"\begin{pmatrix}1&2\end{pmatrix}", r"\begin{bmatrix}1&2\end{bmatrix}", False),
    (r"\frac12", r"\displaystyle\frac12", True),
    (r"\bar{x}", r"\overline{x}", False),
    (r"x^2+y^2", r"y^2+x^2", False),
    (r"\alpha", r"\beta", False),
]


@pytest.mark.browser
@pytest.mark.parametrize("ref, hyp, expected", PAIRS)
def test_published_pairs(renderer, ref, hyp, expected):
    assert renderer.same(ref, hyp) is expected


@pytest.mark.browser
def test_both_comparison_paths(renderer):
    # MathML containment: whitespace differences vanish in MathML.
    a, b = renderer.render("a+b"), renderer.render("a + b")
    assert a.mathml in b.mathml
    # Glyph path: the reference's MathML is not inside the larger formula's, its layout is.
    ref, hyp = renderer.render(r"e^{i\pi}"), renderer.render(r"e^{i \pi} + 1 = 0")
    assert ref.mathml not in hyp.mathml
    assert glyphs_match(ref.glyphs, hyp.glyphs)
    t = math(r"e^{i\pi}")
    assert t.run(r"Euler: $$e^{i \pi} + 1 = 0$$", renderer=renderer).passed
    r = t.run(r"Euler: $$e^{\pi} + 1 = 0$$ and $x$", renderer=renderer)
    assert not r.passed and "no formula matches" in r.explanation


@pytest.mark.browser
def test_render_errors_and_caches(renderer, tmp_path):
    assert not renderer.renders(r"\frac{")
    bad_ref = math(r"\notacommand{x}")
    r = bad_ref.run("$x$", renderer=renderer)
    assert not r.passed and "does not render" in r.explanation
    # Broken candidates are skipped, the good one still matches.
    assert math("x+y").run(r"$\frac{$ and $x + y$", renderer=renderer).passed
    before = renderer.rendered
    renderer.render_many(["x+y", "a + b", "x+y"])
    assert renderer.rendered == before  # all cached
    db = tmp_path / "renders.sqlite"
    with MathRenderer(db) as first:
        first.render_many(["q^2", r"\sqrt{q}"])
    with MathRenderer(db) as second:
        assert second.render("q^2") == first.render("q^2")
        assert second.rendered == 0 and second._page is None  # served from the file, no browser


@pytest.mark.browser
def test_shared_arxiv_math_sample(renderer):
    path = SHARED / "bench_data" / "arxiv_math.jsonl"
    if not path.exists():
        pytest.skip("shared bench samples not present")
    tests = load_tests(path)
    assert len(tests) == 20 and all(t.type == "math" for t in tests)
    # Every reference renders (the benchmark guarantees it).
    assert all(renderer.renders(t.math) for t in tests)
    by_pdf: dict[tuple[str, int], list[str]] = {}
    for t in tests:
        # Same formula with extra spaces around operators: no exact match, so rendering decides.
        spaced = t.math.replace("=", " = ").replace(",", " , ")
        by_pdf.setdefault(t.key, []).append(f"$${spaced}$$" if spaced != t.math else f"$$ {{{t.math}}} $$")
    pages = {k: "Some prose.\n\n" + "\n\n".join(v) for k, v in by_pdf.items()}
    outcomes = run_tests(tests, pages, renderer=renderer)
    assert [o.test.id for o in outcomes if not o.passed] == []
    wrong = {k: "$$x + y = z$$" for k in pages}
    assert not any(o.passed for o in run_tests(tests, wrong, renderer=renderer))
    json.dumps([t.to_json() for t in tests])
