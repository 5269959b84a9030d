"""OCR of image-only pages with RapidOCR (PP-OCR models shipped in its wheel), as TextLines."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import numpy as np
from PIL import Image

from minuscule.documents.types import Char, TextLine
from minuscule.errors import MissingExtraError

# Pages are OCRed at about 150 dpi (A4): PP-OCR reads 10 pt text well there, and bigger inputs cost
# time without gaining accuracy.
OCR_MAX_SIDE = 1800
_lock = threading.Lock()
_engine = None


def _rapidocr():
    global _engine
    with _lock:
        if _engine is None:
            try:
                from rapidocr import RapidOCR
            except ImportError as exc:
                raise MissingExtraError("rapidocr with onnxruntime (OCR for scanned pages)", "lite") from exc
            params = {
                # The angle classifier flips lines by 180° on degraded scans; document pages are upright.
                "Global.use_cls": False,
                "Global.log_level": "error",
                # Word boxes let a detected line that runs across a column gutter be cut apart again.
                "Global.return_word_box": True,
                "EngineConfig.onnxruntime.intra_op_num_threads": int(os.environ.get("MINUSCULE_OCR_THREADS", os.cpu_count() or 1)),
            }
            _engine = RapidOCR(params=params)
        return _engine


def ocr_lines(image: Image.Image) -> list[TextLine]:
    """Text lines with axis-aligned boxes in the image's pixels."""
    scale = 1.0
    if max(image.size) > OCR_MAX_SIDE:
        scale = max(image.size) / OCR_MAX_SIDE
        image = image.resize((round(image.width / scale), round(image.height / scale)), Image.LANCZOS)
    rgb = np.asarray(image.convert("RGB"))
    result = _rapidocr()(rgb[:, :, ::-1].copy())  # RapidOCR expects BGR like OpenCV
    if result is None or result.boxes is None:
        return []
    words_per_line = getattr(result, "word_results", None) or [()] * len(result.txts)
    lines: list[TextLine] = []
    for quad, text, score, words in zip(result.boxes, result.txts, result.scores, words_per_line):
        text = text.strip()
        if not text:
            continue
        xs, ys = quad[:, 0] * scale, quad[:, 1] * scale
        # The detector grows each text region on all sides (DB's unclip); taking part of that back
        # keeps consecutive lines from overlapping and narrow column gutters open.
        pad = 0.15 * float(ys.max() - ys.min())
        bbox = (float(xs.min()) + pad, float(ys.min()) + pad, float(xs.max()) - pad, float(ys.max()) - pad)
        chars = []
        for k, (w_text, _, w_quad) in enumerate(words or ()):
            q = np.asarray(w_quad, dtype=np.float32) * scale
            box = (float(q[:, 0].min()), float(q[:, 1].min()), float(q[:, 0].max()), float(q[:, 1].max()))
            chars.append(Char(str(w_text), box, bbox[3] - bbox[1], space_before=k > 0))
        # Words become the line's chars, so tables can put each word in its cell.
        lines.append(TextLine(text=text, bbox=bbox, size=bbox[3] - bbox[1], score=float(score), chars=tuple(chars)))
    return split_at_gutters(lines)


def _gaps(line: TextLine) -> list[tuple[float, float]]:
    """Gaps between words that are wider than the line's usual word gap."""
    words = line.chars
    gaps = [(a.bbox[2], b.bbox[0]) for a, b in zip(words, words[1:])]
    if not gaps:
        return []
    usual = sorted(g[1] - g[0] for g in gaps)[len(gaps) // 2]
    return [g for g in gaps if g[1] - g[0] > max(1.5 * usual, 0.15 * line.size)]


def split_at_gutters(lines: list[TextLine], bin_px: float = 4.0, min_lines: int = 5) -> list[TextLine]:
    """Cut lines at column gutters the detector ran across (it joins the lines of two columns when the
    gutter is narrow). A gutter is an x position where many lines have a wide word gap and none of them
    a word: in justified text wide gaps do not line up from line to line, between columns they do."""
    if not lines:
        return lines
    width = max(ln.bbox[2] for ln in lines)
    n_bins = int(width / bin_px) + 2
    gap_votes = np.zeros(n_bins, dtype=np.int32)
    for ln in lines:
        for a, b in _gaps(ln):
            gap_votes[int(a / bin_px) + 1:int(b / bin_px)] += 1
    cuts: list[float] = []
    gutters: list[tuple[float, float]] = []
    k = 0
    while k < n_bins:
        if gap_votes[k] >= min_lines:
            start = k
            while k < n_bins and gap_votes[k] >= min_lines:
                k += 1
            run = gap_votes[start:k]
            cuts.append((start + int(np.argmax(run)) + 0.5) * bin_px)
            gutters.append((start * bin_px, k * bin_px))
        k += 1
    if not cuts:
        return lines
    out = []
    for ln in lines:
        pieces: list[list[Char]] = [[]]
        for prev, cur in zip((None, *ln.chars), ln.chars):
            if prev is not None and any(prev.bbox[2] <= x <= cur.bbox[0] for x in cuts):
                pieces.append([])
            pieces[-1].append(cur)
        if len(pieces) == 1:
            out.append(_clear(ln, ln.bbox, gutters))
            continue
        for piece in pieces:
            box = (min(c.bbox[0] for c in piece), ln.bbox[1], max(c.bbox[2] for c in piece), ln.bbox[3])
            chars = tuple(replace(c, space_before=k > 0) for k, c in enumerate(piece))
            out.append(_clear(replace(ln, text=" ".join(c.text for c in piece), chars=chars), box, gutters))
    return out


def _clear(line: TextLine, box: tuple, gutters: list[tuple[float, float]]) -> TextLine:
    """Word and line boxes of OCR reach into the gutter; a line on one side of it is kept out of it, so
    that reading order sees the gutter as clearly as the page shows it."""
    x0, y0, x1, y1 = box
    for g0, g1 in gutters:
        if x0 < g0 and x1 > g0 and (x1 - g0) < 0.25 * (x1 - x0):
            x1 = g0  # mostly left of the gutter
        elif x1 > g1 and x0 < g1 and (g1 - x0) < 0.25 * (x1 - x0):
            x0 = g1  # mostly right of it
    return replace(line, bbox=(x0, y0, x1, y1))
