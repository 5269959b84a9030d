"""KaTeX in one long-lived headless Chromium: formula → MathML + glyph boxes, and the comparison of two renders."""

from __future__ import annotations

import atexit
import json
import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

# Same page as the published scorer: display mode, 24 px, flex-centred in an 800x400 viewport.
# The KaTeX stylesheet is inlined into about:blank, so its relative font URLs do not resolve and
# glyphs are laid out in the browser's fallback fonts; the published scorer renders the same way.
_PAGE = """<!DOCTYPE html><html><head><style>
body { display: flex; justify-content: center; align-items: center; height: 100vh; margin: 0;
       background-color: white; color: black; }
#equation-container { padding: 0; font-size: 24px; }
</style></head><body><div id="equation-container"></div></body></html>"""

_RENDER_JS = r"""
(formulas) => formulas.map((tex) => {
  const box = document.getElementById("equation-container");
  try {
    katex.render(tex, box, {displayMode: true, throwOnError: true});
  } catch (err) {
    box.innerHTML = "";
    return {error: String((err && err.message) || err)};
  }
  const spans = [];
  for (const span of document.querySelectorAll("span")) {
    if (span.children.length === 0 && /\S/.test(span.textContent)) {
      const r = span.getBoundingClientRect();
      spans.push([span.textContent.trim(), r.x, r.y, r.width, r.height]);
    }
  }
  const sem = document.querySelector(".katex-mathml math semantics");
  let mathml = "";
  if (sem) {
    mathml = Array.from(sem.childNodes)
      .filter((n) => !(n.nodeType === 1 && n.localName === "annotation"))
      .map((n) => (n.nodeType === 1 ? n.outerHTML : n.textContent)).join("");
  } else {
    const m = document.querySelector(".katex-mathml math");
    mathml = m ? m.outerHTML : "";
  }
  return {spans, mathml};
})
"""

# Whitespace and invisible spacing characters carry no meaning in either comparison.
_INVISIBLE = re.compile(r"[\s\u200a-\u200d\u2060\ufeff]+")
_NEIGHBOUR_TOLERANCE = 5.0  # px, at 24 px font size
_SEARCH_BUDGET = 2_000_000  # assignment steps before a glyph match is given up as failed


@dataclass(frozen=True)
class Glyph:
    """One rendered character and its box in CSS pixels."""

    text: str
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass(frozen=True)
class RenderedFormula:
    """KaTeX output reduced to what the comparison reads: MathML body (annotation and
    whitespace removed) and one box per character of the visible leaf spans."""

    mathml: str
    glyphs: tuple[Glyph, ...]

    @classmethod
    def from_raw(cls, mathml: str, spans: list[list]) -> "RenderedFormula":
        glyphs: list[Glyph] = []
        for text, x, y, w, h in spans:
            text = _INVISIBLE.sub("", text)
            # A span with several characters is cut into equal-width slices, one per character.
            for i, ch in enumerate(text):
                glyphs.append(Glyph(ch, x + w * i / len(text), y, w / len(text), h))
        return cls(_INVISIBLE.sub("", mathml), tuple(glyphs))


def _neighbours(glyphs: tuple[Glyph, ...]) -> list[tuple[int | None, int | None, int | None, int | None]]:
    """Nearest other glyph strictly up / down / left / right, within the tolerance on the other axis."""
    out = []
    for i, g in enumerate(glyphs):
        best: list[tuple[float, int] | None] = [None, None, None, None]
        for j, o in enumerate(glyphs):
            if i == j:
                continue
            dx, dy = o.cx - g.cx, o.cy - g.cy
            if abs(dx) <= _NEIGHBOUR_TOLERANCE:
                if dy < 0 and (best[0] is None or -dy < best[0][0]):
                    best[0] = (-dy, j)
                if dy > 0 and (best[1] is None or dy < best[1][0]):
                    best[1] = (dy, j)
            if abs(dy) <= _NEIGHBOUR_TOLERANCE:
                if dx < 0 and (best[2] is None or -dx < best[2][0]):
                    best[2] = (-dx, j)
                if dx > 0 and (best[3] is None or dx < best[3][0]):
                    best[3] = (dx, j)
        out.append(tuple(b[1] if b else None for b in best))
    return out


def glyphs_match(reference: tuple[Glyph, ...], hypothesis: tuple[Glyph, ...]) -> bool:
    """Can every reference glyph be paired with a distinct hypothesis glyph of the same character
    so that each reference neighbour relation is mirrored? (backtracking, reference in DOM order)"""
    cands = [[j for j, h in enumerate(hypothesis) if h.text == r.text] for r in reference]
    if any(not c for c in cands):
        return False
    ref_nb, hyp_nb = _neighbours(reference), _neighbours(hypothesis)
    n = len(reference)
    assigned = [-1] * n
    used = [False] * len(hypothesis)
    tried = [0] * (n + 1)

    def consistent(i: int, c: int) -> bool:
        for d in range(4):
            rn = ref_nb[i][d]
            if rn is None:
                continue
            hn = hyp_nb[c][d]
            if hn is None:
                return False
            if assigned[rn] >= 0:
                if assigned[rn] != hn:
                    return False
            elif hypothesis[hn].text != reference[rn].text:
                return False
        return True

    i, steps = 0, 0
    while 0 <= i < n:
        if assigned[i] >= 0:  # coming back: free this glyph's current partner, try the next
            used[assigned[i]] = False
            assigned[i] = -1
        placed = False
        while tried[i] < len(cands[i]):
            c = cands[i][tried[i]]
            tried[i] += 1
            steps += 1
            if not used[c] and consistent(i, c):
                assigned[i], used[c], placed = c, True, True
                break
        if steps > _SEARCH_BUDGET:
            return False
        if placed:
            i += 1
            tried[i] = 0
        else:
            tried[i] = 0
            i -= 1
    return i == n


def same_formula(reference: RenderedFormula, hypothesis: RenderedFormula) -> bool:
    """The reference's MathML is contained in the hypothesis's, or its glyph layout is matched."""
    if reference.mathml in hypothesis.mathml:
        return True
    return glyphs_match(reference.glyphs, hypothesis.glyphs)


_hosts = threading.local()


def _browser():
    """This thread's Chromium, started once and shared by every renderer of the thread
    (Playwright's sync API allows one running instance per thread)."""
    host = getattr(_hosts, "host", None)
    if host is None or not host[1].is_connected():
        from minuscule.browser import launch_chromium

        pw, browser = launch_chromium()
        host = (pw, browser)
        _hosts.host = host
        atexit.register(_stop_host, pw, browser)
    return host[1]


def _stop_host(pw, browser) -> None:
    try:
        browser.close()
    finally:
        pw.stop()


class MathRenderer:
    """Renders LaTeX with KaTeX in a Chromium page kept open; caches renders by formula and
    verdicts by (reference, hypothesis). Optional SQLite file keeps renders across runs.
    Use from one thread (Playwright's sync API is bound to the thread that started it)."""

    def __init__(self, cache_path: str | Path | None = None):
        self._renders: dict[str, RenderedFormula | None] = {}
        self._verdicts: dict[tuple[str, str], bool] = {}
        self._context = self._page = None
        self._db: sqlite3.Connection | None = None
        self._db_prefix = ""
        self.rendered = 0  # formulas actually sent to the browser (for stats and tests)
        if cache_path is not None:
            self._db = sqlite3.connect(str(cache_path))
            self._db.execute("CREATE TABLE IF NOT EXISTS renders (tex TEXT PRIMARY KEY, result TEXT)")

    def _ensure_page(self):
        if self._page is None:
            from minuscule.browser import katex_dir

            kdir = katex_dir()
            self._context = _browser().new_context(viewport={"width": 800, "height": 400})
            page = self._context.new_page()
            page.set_content(_PAGE)
            page.add_style_tag(content=(kdir / "dist" / "katex.min.css").read_text(encoding="utf-8"))
            page.add_script_tag(content=(kdir / "dist" / "katex.min.js").read_text(encoding="utf-8"))
            if not page.evaluate("typeof katex !== 'undefined'"):
                raise RuntimeError("KaTeX did not load in Chromium")
            self._page = page
        return self._page

    def render_many(self, formulas: list[str]) -> dict[str, RenderedFormula | None]:
        """Render every formula not yet cached in one browser round trip; None = KaTeX error."""
        todo = list(dict.fromkeys(f for f in formulas if f not in self._renders))
        if todo and self._db is not None:
            if not self._db_prefix:
                # Renders depend on the KaTeX release; a cache file may outlive an upgrade.
                from minuscule.browser import katex_dir

                meta = json.loads((katex_dir() / "package.json").read_text(encoding="utf-8"))
                self._db_prefix = f"katex {meta.get('version')}|24px|"
            for tex in list(todo):
                row = self._db.execute("SELECT result FROM renders WHERE tex = ?", (self._db_prefix + tex,)).fetchone()
                if row:
                    raw = json.loads(row[0])
                    self._renders[tex] = RenderedFormula.from_raw(raw["mathml"], raw["spans"]) if raw else None
                    todo.remove(tex)
        if todo:
            page = self._ensure_page()
            for start in range(0, len(todo), 64):
                chunk = todo[start : start + 64]
                results = page.evaluate(_RENDER_JS, chunk)
                self.rendered += len(chunk)
                for tex, raw in zip(chunk, results):
                    ok = "error" not in raw
                    self._renders[tex] = RenderedFormula.from_raw(raw["mathml"], raw["spans"]) if ok else None
                    if self._db is not None:
                        self._db.execute(
                            "INSERT OR REPLACE INTO renders VALUES (?, ?)",
                            (self._db_prefix + tex, json.dumps(raw if ok else None)),
                        )
            if self._db is not None:
                self._db.commit()
        return {f: self._renders[f] for f in formulas}

    def render(self, formula: str) -> RenderedFormula | None:
        return self.render_many([formula])[formula]

    def renders(self, formula: str) -> bool:
        """Does KaTeX accept the formula (the benchmark requires this of every reference)?"""
        return self.render(formula) is not None

    def same(self, reference: str, hypothesis: str) -> bool:
        """Published comparison of two formulas' renders; False when either does not render."""
        key = (reference, hypothesis)
        if key not in self._verdicts:
            got = self.render_many([reference, hypothesis])
            ref, hyp = got[reference], got[hypothesis]
            self._verdicts[key] = ref is not None and hyp is not None and same_formula(ref, hyp)
        return self._verdicts[key]

    def close(self) -> None:
        if self._context is not None:
            try:
                self._context.close()
            except Exception:  # the browser may already be gone at interpreter exit
                pass
        self._context = self._page = None
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> "MathRenderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_default: MathRenderer | None = None
_default_lock = threading.Lock()


def default_renderer() -> MathRenderer:
    """A process-wide renderer started on first use and closed at exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MathRenderer()
            atexit.register(_default.close)
        return _default
