"""OCR of image-only pages with RapidOCR (PP-OCR models shipped in its wheel), as TextLines."""

from __future__ import annotations

import importlib.util
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
BACKENDS = ("openvino", "onnxruntime")


def ocr_backend() -> str:
    """OpenVINO runs the same PP-OCR ONNX models at about a third of onnxruntime's CPU time (measured
    in `minuscule bench speed`); onnxruntime is the fallback. MINUSCULE_OCR_BACKEND picks one."""
    chosen = os.environ.get("MINUSCULE_OCR_BACKEND", "").strip().lower()
    if chosen:
        if chosen not in BACKENDS:
            raise ValueError(f"MINUSCULE_OCR_BACKEND={chosen!r}: expected one of {', '.join(BACKENDS)}")
        return chosen
    return "openvino" if importlib.util.find_spec("openvino") is not None else "onnxruntime"


def _rapidocr():
    global _engine
    with _lock:
        if _engine is None:
            try:
                from rapidocr import EngineType, RapidOCR
            except ImportError as exc:
                raise MissingExtraError("rapidocr with onnxruntime (OCR for scanned pages)", "lite") from exc
            threads = int(os.environ.get("MINUSCULE_OCR_THREADS", os.cpu_count() or 1))
            params = {
                # The angle classifier flips lines by 180° on degraded scans; document pages are upright.
                "Global.use_cls": False,
                "Global.log_level": "error",
                # Character boxes let a detected line that runs across a column gutter be cut apart
                # again, even where the recogniser glued the words on both sides of it together.
                "Global.return_word_box": True,
                "Global.return_single_char_box": True,
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            }
            if ocr_backend() == "openvino":
                params.update({"Det.engine_type": EngineType.OPENVINO, "Rec.engine_type": EngineType.OPENVINO,
                               "EngineConfig.openvino.inference_num_threads": threads})
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
        # Letters become the line's chars, so tables can put each word in its cell.
        chars = _chars(text, words or (), scale, bbox)
        lines.append(TextLine(text=text, bbox=bbox, size=bbox[3] - bbox[1], score=float(score), chars=chars))
    return split_at_gutters(lines)


def _chars(text: str, boxes, scale: float, bbox: tuple) -> tuple[Char, ...]:
    """One Char per non-space character of the line, with the recogniser's box for it; spaces become
    `space_before`. Without a box per character, the line's box is shared out evenly."""
    letters = [(ch, k > 0 and text[k - 1] == " ") for k, ch in enumerate(text) if ch != " "]
    size = bbox[3] - bbox[1]
    if len(boxes) == len(letters):
        out = []
        for (ch, space), (_, _, quad) in zip(letters, boxes):
            q = np.asarray(quad, dtype=np.float32) * scale
            out.append(Char(ch, (float(q[:, 0].min()), bbox[1], float(q[:, 0].max()), bbox[3]), size, space_before=space,
                            exact_spaces=True))
        return tuple(out)
    step = (bbox[2] - bbox[0]) / max(len(text), 1)
    return tuple(Char(ch, (bbox[0] + k * step, bbox[1], bbox[0] + (k + 1) * step, bbox[3]), size,
                      space_before=k > 0 and text[k - 1] == " ", exact_spaces=True) for k, ch in enumerate(text) if ch != " ")


def _words(line: TextLine) -> list[tuple[float, float]]:
    """x extents of the line's words."""
    words: list[list[float]] = []
    for c in line.chars:
        if not words or c.space_before:
            words.append([c.bbox[0], c.bbox[2]])
        else:
            words[-1][1] = max(words[-1][1], c.bbox[2])
    return [(a, b) for a, b in words]


def _gaps(line: TextLine) -> list[tuple[float, float]]:
    """Gaps between words that are wider than the line's usual word gap."""
    words = _words(line)
    gaps = [(a[1], b[0]) for a, b in zip(words, words[1:])]
    if not gaps:
        return []
    usual = sorted(g[1] - g[0] for g in gaps)[len(gaps) // 2]
    return [g for g in gaps if g[1] - g[0] > max(1.5 * usual, 0.15 * line.size)]


def split_at_gutters(lines: list[TextLine], bin_px: float = 4.0, min_lines: int = 5) -> list[TextLine]:
    """Cut lines at column gutters the detector ran across.

    Two kinds of evidence find a gutter. Where it is narrow the detector joins the lines of two columns
    all the way down, and the gutter shows as an x position where many lines have a wide word gap
    (in justified text wide gaps do not line up from line to line, between columns they do). Where
    it joins only a few lines (a heading beside the other column's first line), the gutter shows as a
    strip that almost no line box covers, with many lines ending just left of it and starting just
    right of it; the few lines that cross it are cut only at a wide gap there.
    """
    if not lines:
        return lines
    voted = _voted_gutters(lines, bin_px, min_lines)
    covered = [g for g in _uncovered_gutters(lines, bin_px, min_lines) if not any(_overlap(g, v[:2]) for v in voted)]
    if not voted and not covered:
        return lines
    gutters = [(a, b) for a, b, _ in voted] + covered
    cuts = [(x, None) for _, _, x in voted] + [((a + b) / 2, (a, b)) for a, b in covered]
    out = []
    for ln in lines:
        pieces: list[list[Char]] = [[]]
        for prev, cur in zip((None, *ln.chars), ln.chars):
            if prev is not None and any(prev.bbox[2] <= x <= cur.bbox[0] and (edges is None or _at_edges(prev, cur, edges, ln.size))
                                        for x, edges in cuts):
                pieces.append([])
            pieces[-1].append(cur)
        if len(pieces) == 1:
            out.append(_clear(ln, ln.bbox, gutters))
            continue
        for piece in pieces:
            box = (min(c.bbox[0] for c in piece), ln.bbox[1], max(c.bbox[2] for c in piece), ln.bbox[3])
            chars = (replace(piece[0], space_before=False), *piece[1:])
            text = "".join((" " if c.space_before else "") + c.text for c in chars)
            out.append(_clear(replace(ln, text=text, chars=chars), box, gutters))
    return out


def _at_edges(prev: Char, cur: Char, edges: tuple[float, float], size: float) -> bool:
    """A gap whose sides are where the columns end and start (a title's word gap rarely is)."""
    g0, g1 = edges
    if cur.bbox[0] - prev.bbox[2] < max(0.6 * (g1 - g0), 0.5 * size):
        return False  # a word gap (or a letter gap) narrower than the gutter is not the gutter
    return g0 - 0.75 * size <= prev.bbox[2] <= g0 + 0.5 * size and g1 - 0.5 * size <= cur.bbox[0] <= g1 + 0.75 * size


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    runs, k = [], 0
    while k < len(mask):
        if mask[k]:
            start = k
            while k < len(mask) and mask[k]:
                k += 1
            runs.append((start, k))
        k += 1
    return runs


def _voted_gutters(lines: list[TextLine], bin_px: float, min_lines: int) -> list[tuple[float, float, float]]:
    """(start, end, cut) of each run of aligned wide gaps; the cut goes where most lines agree."""
    n_bins = int(max(ln.bbox[2] for ln in lines) / bin_px) + 2
    votes = np.zeros(n_bins, dtype=np.int32)
    for ln in lines:
        for a, b in _gaps(ln):
            votes[int(a / bin_px) + 1:int(b / bin_px)] += 1
    em = float(np.median([ln.size for ln in lines]))
    left = min(ln.bbox[0] for ln in lines)
    right = max(ln.bbox[2] for ln in lines)
    out = []
    for start, end in _runs(votes >= min_lines):
        # Gaps a few em from the text's edge are list numbers or indents lining up, not a gutter.
        if start * bin_px < left + 4 * em or end * bin_px > right - 4 * em:
            continue
        out.append((start * bin_px, end * bin_px, (start + int(np.argmax(votes[start:end])) + 0.5) * bin_px))
    return out


def _uncovered_gutters(lines: list[TextLine], bin_px: float, min_lines: int) -> list[tuple[float, float]]:
    """Inner strips that at most a few line boxes cross, with lines ending left of them and starting right."""
    em = float(np.median([ln.size for ln in lines]))
    left = min(ln.bbox[0] for ln in lines)
    right = max(ln.bbox[2] for ln in lines)
    centres = (np.arange(int(right / bin_px) + 2) + 0.5) * bin_px
    x0 = np.array([ln.bbox[0] for ln in lines])[:, None]
    x1 = np.array([ln.bbox[2] for ln in lines])[:, None]
    cross = ((x0 < centres) & (x1 > centres)).sum(axis=0)
    ends = ((x1 <= centres) & (x1 >= centres - 3 * em)).sum(axis=0)
    starts = ((x0 >= centres) & (x0 <= centres + 3 * em)).sum(axis=0)
    ok = (4 * cross <= np.minimum(ends, starts)) & (ends >= min_lines) & (starts >= min_lines)
    ok &= (centres > left + em) & (centres < right - em)
    return [(start * bin_px, end * bin_px) for start, end in _runs(ok)]


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return min(a[1], b[1]) > max(a[0], b[0])


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
