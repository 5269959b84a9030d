"""OCR of image-only pages with RapidOCR (PP-OCR models shipped in its wheel), as TextLines."""

from __future__ import annotations

import os
import threading

import numpy as np
from PIL import Image

from minuscule.documents.types import TextLine
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
    lines = []
    for quad, text, score in zip(result.boxes, result.txts, result.scores):
        text = text.strip()
        if not text:
            continue
        xs, ys = quad[:, 0] * scale, quad[:, 1] * scale
        bbox = (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))
        # A detection box is about 1.3x the font's x-height-to-descender span; this keeps sizes comparable.
        lines.append(TextLine(text=text, bbox=bbox, size=(bbox[3] - bbox[1]) * 0.75, score=float(score)))
    return lines
