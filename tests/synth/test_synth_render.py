"""Rendering in Chromium: one-page PDFs, nothing clipped, the text layer says what the reference says."""

from __future__ import annotations

import random
import re

import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from minuscule.errors import MissingExtraError
from minuscule.synth.blocks import Formula, Paragraph, Table, sentence_is_plain
from minuscule.synth.mine import PageMiner, edge_lines
from minuscule.synth.page import render_page
from minuscule.synth.render import pdf_page_count, pdf_text, rasterise
from minuscule.synth.selfcheck import keep_passing

pytestmark = pytest.mark.browser
N_PAGES = 8


@pytest.fixture(scope="module")
def pages():
    try:
        from minuscule.synth.render import PageRenderer

        renderer = PageRenderer()
    except MissingExtraError as exc:  # no Chromium, Playwright or KaTeX on this machine; other errors fail
        pytest.skip(f"browser not available: {exc}")
    try:
        out = [render_page(renderer, 21, i)[0] for i in range(N_PAGES)]
    finally:
        renderer.close()
    assert all(p is not None for p in out)
    return out


def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_pdfs_are_one_page_and_show_a_table_or_formula(pages):
    for page in pages:
        assert pdf_page_count(page.pdf) == 1
        assert any(isinstance(b, (Table, Formula)) for b in page.blocks)


def test_nothing_is_clipped(pages):
    """Every kept body block lies inside the page body; the trimmed blocks are absent from the page."""
    for page in pages:
        left, top, right, bottom = page.layout["body"]
        shown = {b[0] for b in page.layout["boxes"]}
        assert shown == set(page.kept)
        for b, region, x0, y0, x1, y1 in page.layout["boxes"]:
            if region < 0:
                continue
            assert y1 <= bottom and x1 <= right + 0.5 and x0 >= left - 0.5, (b, y1, bottom, page.spec.style)


def test_text_layer_matches_reference_prose(pages):
    """Character error rate of every plain prose sentence against the PDF text layer stays below 1%."""
    errors = chars = 0
    for page in pages:
        text = _ws(pdf_text(page.pdf).replace("\u00ad", ""))
        for block in page.blocks:
            if not isinstance(block, Paragraph):
                continue
            for s in block.sentences:
                if not sentence_is_plain(s):
                    continue
                ref = s[0].text
                align = fuzz.partial_ratio_alignment(ref, text)
                hyp = text[align.dest_start:align.dest_end]
                errors += Levenshtein.distance(ref, hyp)
                chars += len(ref)
    assert chars > 2000
    assert errors / chars < 0.01, errors / chars


def test_markdown_leaves_out_running_heads(pages):
    for page in pages:
        for text in page.heads.header + page.heads.footer:
            assert text not in page.markdown
        assert not page.heads.page_number or page.heads.page_number not in page.markdown.splitlines()


def test_mined_tests_pass_on_reference_and_fail_elsewhere(pages):
    from minuscule.checks import parse_test

    kinds = set()
    for k, page in enumerate(pages):
        records = PageMiner(page, "t", "pages/t.pdf", random.Random(k)).records()
        check = keep_passing(records, page.markdown)
        assert len(check.kept) >= 10
        # Rejections are rare: the miner knows what the page shows.
        assert len(check.rejected) <= 0.1 * len(records), check.rejected
        kinds |= {r["type"] for r in check.kept}
        other = pages[(k + 1) % len(pages)].markdown
        content = [r for r in check.kept if r["type"] in ("present", "order", "table")]
        passed_elsewhere = sum(parse_test(r).run(other).passed for r in content)
        assert passed_elsewhere <= 0.05 * len(content)
    assert kinds == {"present", "absent", "order", "table", "math", "baseline"}


def test_column_edge_lines_are_verbatim(pages):
    seen = 0
    for page in pages:
        for first, last in edge_lines(page.layout):
            for line in (first, last):
                if line is not None:
                    seen += 1
                    assert line.text in page.markdown
    assert seen >= N_PAGES


def test_rasterised_size_follows_paper(pages):
    page = pages[0]
    image = rasterise(page.pdf, 72)
    assert abs(image.width - page.spec.style.width_mm / 25.4 * 72) <= 2
    assert abs(image.height - page.spec.style.height_mm / 25.4 * 72) <= 2


def test_renderer_recycles_its_tab_without_changing_pages(monkeypatch):
    """A page rendered in a fresh tab and in a tab that rendered other pages before is the same."""
    import minuscule.synth.render as render_mod
    from minuscule.synth.page import make_spec, page_seed

    try:
        renderer = render_mod.PageRenderer()
    except Exception as exc:
        pytest.skip(f"browser not available: {exc}")
    monkeypatch.setattr(render_mod, "RECYCLE_EVERY", 2)
    try:
        specs = [make_spec(page_seed(5, i, 0)) for i in range(3)]
        renderer.render(specs[0].html)
        used_tab = renderer.render(specs[2].html).layout
        tab = renderer._page
        fresh_tab = renderer.render(specs[2].html).layout  # the third render opens a new tab
        assert renderer._page is not tab
        assert fresh_tab == used_tab
        assert renderer.render(specs[1].html).layout != used_tab
    finally:
        renderer.close()
