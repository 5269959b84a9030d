"""Synthetic content without a browser: determinism, safe text, well-formed tables, KaTeX-valid formulas."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from minuscule.markup.tables import html_tables
from minuscule.markup.text import normalize_text
from minuscule.synth.blocks import Formula, Heading, ListBlock, Paragraph, Table
from minuscule.synth.content import LOCALES, ContentMaker, clean, make_blocks
from minuscule.synth.formulas import FormulaMaker
from minuscule.synth.layout import choose_style
from minuscule.synth.page import make_spec, page_seed
from minuscule.synth.reference import block_md, page_markdown, table_md

UNSAFE = set("&<>$_*|#\\`~^{}[]\"'")


def _blocks(seed: int, locale: str):
    maker = ContentMaker(random.Random(seed), locale)
    return make_blocks(maker, budget_lines=120, line_chars=70, max_table_cols=8, small_table_cols=4, title=True), maker


def test_same_seed_same_page_spec_and_markdown():
    a = make_spec(page_seed(7, 3, 0))
    b = make_spec(page_seed(7, 3, 0))
    c = make_spec(page_seed(7, 4, 0))
    assert a == b
    assert page_markdown(list(a.blocks)) == page_markdown(list(b.blocks))
    assert a.html != c.html


def test_page_seeds_differ_by_seed_index_and_attempt():
    seeds = {page_seed(s, i, k) for s in range(3) for i in range(20) for k in range(3)}
    assert len(seeds) == 3 * 20 * 3


@pytest.mark.parametrize("locale", sorted(set(LOCALES)))
def test_text_has_no_markup_characters(locale):
    blocks, maker = _blocks(11, locale)
    texts = []
    for b in blocks:
        if isinstance(b, Heading):
            texts.append(b.text)
        elif isinstance(b, (Paragraph, ListBlock)):
            sentences = b.sentences if isinstance(b, Paragraph) else b.items
            texts += [sp.text for s in sentences for sp in s if sp.kind != "math"]
        elif isinstance(b, Table):
            texts += [c.text for row in b.rows for c in row] + [b.caption]
    texts += [f.text for f in maker.footnotes]
    assert texts
    for t in texts:
        assert not (set(t) & UNSAFE), t
        # The checks' normalisation must leave our text unchanged, or present tests would drift.
        assert normalize_text(t) == t, t


def test_clean_removes_markup_and_collapses_spaces():
    assert clean("Smith & Sons_<b>  Ltd") == "Smith Sonsb Ltd"


def test_every_page_plan_has_a_table_and_a_formula():
    for seed in range(30):
        rng = random.Random(seed)
        maker = ContentMaker(rng, rng.choice(LOCALES))
        blocks = make_blocks(maker, 60, 60, 6, 4, title=False)
        kinds = {b.kind for b in blocks}
        assert {"table", "formula"} <= kinds


def test_tables_are_rectangular_and_parse_with_spans():
    spans = 0
    for seed in range(40):
        maker = ContentMaker(random.Random(seed), "en_US")
        table = maker.table(8)
        grids = html_tables(table_md(table))
        assert len(grids) == 1
        grid = grids[0]
        assert grid.is_rectangular, table_md(table)
        assert grid.n_cols == table.n_cols
        assert grid.headings, "header row missing"
        spans += sum(1 for row in table.rows for c in row if c.rowspan > 1 or c.colspan > 1)
    assert spans > 0, "no rowspan/colspan in 40 tables"


def test_markdown_conventions():
    blocks, _ = _blocks(5, "en_US")
    md = page_markdown(blocks)
    for b in blocks:
        text = block_md(b)
        assert text in md
        if isinstance(b, Formula):
            assert text == f"$$\n{b.latex}\n$$"
        if isinstance(b, Table):
            assert "<table>" in text and "</table>" in text and "|" not in text
        if isinstance(b, Heading):
            assert text.startswith("#" * b.level + " ")


def test_styles_vary_and_columns_fit_the_paper():
    styles = [choose_style(random.Random(s)) for s in range(200)]
    assert {s.columns for s in styles} == {1, 2, 3}
    assert any(s.landscape for s in styles)
    assert len({s.paper for s in styles}) >= 4
    assert len({s.font for s in styles}) >= 10
    for s in styles:
        assert s.column_width_mm >= 55, s


def _fonts_installed() -> set[str]:
    if not shutil.which("fc-list"):
        pytest.skip("fc-list not available")
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=True).stdout
    return {name.strip() for line in out.splitlines() for name in line.split(",")}


def test_layout_fonts_are_installed():
    from minuscule.synth.layout import ALL_FONTS

    missing = [f for f in ALL_FONTS if f not in _fonts_installed()]
    if missing:
        pytest.skip(f"font packages from the Makefile are not installed: {missing}")


def test_formulas_render_in_katex():
    """Every formula kind, display and inline, is accepted by KaTeX (node, throwOnError)."""
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    from minuscule.browser import katex_dir

    try:
        katex = katex_dir() / "dist" / "katex.min.js"
    except Exception:
        pytest.skip("KaTeX is not installed")
    maker = FormulaMaker(random.Random(3))
    kinds = ["equation", "sum", "integral", "matrix", "cases", "limit", "product", "aligned", "norm", "set"]
    display = [getattr(maker, f"_{k}")() for k in kinds for _ in range(15)] + [maker.display() for _ in range(100)]
    inline = [maker.inline() for _ in range(100)]
    content = ContentMaker(random.Random(4), "en_US")
    tagged = [content.formula().latex for _ in range(200)]
    assert any("\\tag{" in t for t in tagged)
    display += tagged
    script = (
        f"const katex = require({json.dumps(str(katex))});"
        "const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const bad = [];"
        "for (const [tex, display] of items) {"
        "  try { katex.renderToString(tex, {displayMode: display, throwOnError: true}); }"
        "  catch (e) { bad.push([tex, String(e.message)]); } }"
        "console.log(JSON.stringify(bad));"
    )
    items = [[t, True] for t in display] + [[t, False] for t in inline]
    out = subprocess.run([node, "-e", script], input=json.dumps(items), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_content_does_not_depend_on_the_hash_seed():
    """Pages are generated in other processes; set or dict ordering must not leak into content."""
    import sys

    code = ("from minuscule.synth.page import make_spec, page_seed\n"
            "from minuscule.synth.reference import page_markdown\n"
            "import hashlib\n"
            "h = hashlib.sha256()\n"
            "for i in range(60):\n"
            "    s = make_spec(page_seed(1, i, 0))\n"
            "    h.update(page_markdown(list(s.blocks)).encode()); h.update(s.html.body.encode())\n"
            "print(h.hexdigest())\n")
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**__import__("os").environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1
