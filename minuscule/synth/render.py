"""Render page HTML in one reused headless Chromium: typeset KaTeX, trim overflow, measure lines, print, rasterise."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from minuscule.synth.html import PageHTML

# Runs inside the page. Typesets every formula, then removes blocks that cannot be shown whole:
# formulas KaTeX rejects, blocks wider than their column, and trailing blocks while the body
# overflows the page (so nothing is ever clipped). Then reports the words of every text line
# with their boxes, so first/last lines of columns and the column of each block are known.
LAYOUT_JS = r"""
async ([css, html]) => {
  document.getElementById('page-style').textContent = css;
  document.body.innerHTML = html;
  const bad = new Set();
  for (const el of document.querySelectorAll('.tex')) {
    try {
      katex.render(el.dataset.tex, el, {displayMode: el.classList.contains('dtex'), throwOnError: true, output: 'html'});
    } catch (e) {
      const b = el.closest('[data-b]');
      if (b) bad.add(b.dataset.b);
    }
  }
  // Layout first, so the fonts KaTeX's spans need start loading; then wait for them, or the
  // overflow checks below would measure fallback glyphs that the printed page does not use.
  void document.body.offsetHeight;
  await document.fonts.ready;
  const body = document.getElementById('body');
  const removed = [];
  const all = () => [...document.querySelectorAll('#body [data-b]')];
  const shown = () => all().filter((el) => !el.classList.contains('gone'));
  const hide = (el) => el.classList.add('gone');
  // scrollHeight is rounded to whole pixels, so also compare the blocks' exact boxes: a fraction
  // of a pixel past the body would be clipped by its overflow: hidden.
  const overflows = () => {
    if (body.scrollHeight > body.clientHeight) return true;
    const limit = body.getBoundingClientRect().bottom - 0.25;
    return shown().some((el) => el.getBoundingClientRect().bottom > limit);
  };
  for (const el of all()) if (bad.has(el.dataset.b) || el.scrollWidth > el.clientWidth) hide(el);
  // The longest prefix of blocks (reading order) that fits, by bisection: each probe is a layout.
  const cands = shown();
  const showUpTo = (k) => cands.forEach((el, j) => el.classList.toggle('gone', j >= k));
  let lo = cands.length;
  if (overflows()) {
    lo = 0;
    let hi = cands.length;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      showUpTo(mid);
      if (overflows()) hi = mid; else lo = mid;
    }
    showUpTo(lo);
  }
  // Then give the later blocks a second chance in reading order: a long table that did not fit
  // may be followed by a paragraph that does.
  let misses = 0;
  for (const el of cands.slice(lo + 1)) {
    if (misses >= 4) break;
    el.classList.remove('gone');
    if (overflows()) { hide(el); misses += 1; } else { misses = 0; }
  }
  // A heading must be followed by its own content, not by another heading or the page end.
  for (;;) {
    const bs = shown();
    const orphan = bs.find((el, k) => /^H[1-3]$/.test(el.tagName) && (k === bs.length - 1 || /^H[1-3]$/.test(bs[k + 1].tagName)));
    if (!orphan) break;
    hide(orphan);
  }
  for (const el of all()) {
    if (!el.classList.contains('gone')) continue;
    removed.push(+el.dataset.b);
    for (const f of document.querySelectorAll(`[data-dep="${el.dataset.b}"]`)) { removed.push(+f.dataset.b); f.remove(); }
    const region = el.parentElement;
    el.remove();
    if (region.classList.contains('region') && !region.querySelector('[data-b]')) region.remove();
  }
  if (overflows()) removed.push(...all().map((el) => +el.dataset.b));
  const heads = {};
  for (const id of ['hdr', 'ftr']) {
    const el = document.getElementById(id);
    if (el && el.scrollWidth > el.clientWidth + 1) { el.remove(); }
    heads[id] = !!document.getElementById(id);
  }
  const words = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  let seg = 0;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (parent.closest('.tex, sup, table, .cap')) continue;
    const blk = parent.closest('[data-b]');
    if (!blk) continue;
    seg += 1;
    const direct = parent === blk || parent.tagName === 'LI';
    const re = /\S+/g;
    let m;
    while ((m = re.exec(node.data))) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = range.getClientRects();
      if (!rects.length) continue;
      const r = rects[0];
      words.push([+blk.dataset.b, direct && rects.length === 1 ? seg : -seg, m[0], r.left, r.top, r.bottom]);
    }
  }
  const regions = [];
  for (const el of document.querySelectorAll('#body .region')) {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    regions.push({r: +el.dataset.r, left: r.left, top: r.top, width: r.width, bottom: r.bottom,
                  columns: +cs.columnCount || 1, gap: parseFloat(cs.columnGap) || 0});
  }
  const boxes = [];
  for (const el of document.querySelectorAll('[data-b]')) {
    const r = el.getBoundingClientRect();
    const region = el.closest('.region');
    boxes.push([+el.dataset.b, region ? +region.dataset.r : -1, r.left, r.top, r.right, r.bottom]);
  }
  const b = body.getBoundingClientRect();
  return {removed, heads, words, regions, boxes, body: [b.left, b.top, b.right, b.bottom]};
}
"""


RECYCLE_EVERY = 500  # pages per browser tab


@dataclass(frozen=True)
class RenderResult:
    pdf: bytes
    layout: dict  # what LAYOUT_JS returned: removed, heads, words, regions, boxes


class PageRenderer:
    """One Chromium for many pages; `render(html)` returns the one-page PDF and the measured layout."""

    def __init__(self) -> None:
        from minuscule.browser import katex_dir, launch_chromium

        self.katex_dir = str(katex_dir())
        self._tmp = tempfile.TemporaryDirectory(prefix="minuscule-synth-")
        shell = Path(self._tmp.name) / "shell.html"
        # One document for all pages: KaTeX's script and fonts load once, each page swaps in its
        # stylesheet and body (a navigation per page would re-parse KaTeX every time).
        shell.write_text(
            '<!doctype html><html><head><meta charset="utf-8">'
            f'<link rel="stylesheet" href="file://{self.katex_dir}/dist/katex.min.css">'
            f'<script src="file://{self.katex_dir}/dist/katex.min.js"></script>'
            '<style id="page-style"></style></head><body></body></html>', encoding="utf-8")
        self._shell = shell
        self._closed = False
        self._pw, self._browser = launch_chromium()
        self.browser_version = self._browser.version
        self._page = None
        self._renders = 0
        self._open_page()

    def _open_page(self) -> None:
        if self._page is not None:
            self._page.close()
        self._page = self._browser.new_page()
        self._page.emulate_media(media="print")
        self._page.goto(self._shell.as_uri(), wait_until="load")

    def render(self, html: PageHTML) -> RenderResult:
        # A fresh tab now and then, so a run of many thousand pages does not accumulate state;
        # and one retry in a fresh tab if the tab crashed. Layout does not depend on the tab's history.
        if self._renders and self._renders % RECYCLE_EVERY == 0:
            self._open_page()
        self._renders += 1
        try:
            return self._render(html)
        except Exception as exc:
            from playwright.sync_api import Error as PlaywrightError

            if not isinstance(exc, PlaywrightError) or not self._browser.is_connected():
                raise
            self._page = None
            self._open_page()
            return self._render(html)

    def _render(self, html: PageHTML) -> RenderResult:
        layout = self._page.evaluate(LAYOUT_JS, [html.css, html.body])
        pdf = self._page.pdf(prefer_css_page_size=True, print_background=True,
                             margin={"top": "0", "right": "0", "bottom": "0", "left": "0"})
        return RenderResult(pdf, layout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._browser.close()
        finally:
            self._pw.stop()
            self._tmp.cleanup()

    def __enter__(self) -> "PageRenderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def pdf_page_count(pdf: bytes) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        return len(doc)
    finally:
        doc.close()


def rasterise(pdf: bytes, dpi: float):
    """The first page as an RGB PIL image at `dpi`."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        page = doc[0]
        image = page.render(scale=dpi / 72.0).to_pil().convert("RGB")
        page.close()
        return image
    finally:
        doc.close()


def pdf_text(pdf: bytes) -> str:
    """The text layer of the first page, as pdfium extracts it."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        page = doc[0]
        tp = page.get_textpage()
        text = tp.get_text_range()
        tp.close()
        page.close()
        return text
    finally:
        doc.close()
