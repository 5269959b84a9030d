"""Ruling lines found in a page image (long straight runs of dark pixels), for tables in scans."""

from __future__ import annotations

import numpy as np
from PIL import Image

from minuscule.documents.types import Rule

WORK_SIDE = 1600  # detect on a copy this large: rules survive downscaling, and it bounds the cost


def _runs(mask: np.ndarray, min_len: int) -> list[tuple[int, int, int]]:
    """(row, start, end) of horizontal runs of True at least min_len long."""
    out = []
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    diff = np.diff(padded, axis=1)
    rows_with = np.flatnonzero(mask.sum(axis=1) >= min_len)
    for r in rows_with:
        starts = np.flatnonzero(diff[r] == 1)
        ends = np.flatnonzero(diff[r] == -1)
        for a, b in zip(starts, ends):
            if b - a >= min_len:
                out.append((int(r), int(a), int(b)))
    return out


def _merge(runs: list[tuple[int, int, int]], tol: int = 3) -> list[tuple[int, int, int, int]]:
    """Runs in neighbouring rows with about the same span are one (thick) line: (r0, r1, start, end)."""
    lines: list[list[int]] = []
    for r, a, b in sorted(runs):
        for ln in lines:
            if r - ln[1] <= 1 and abs(a - ln[2]) <= tol and abs(b - ln[3]) <= tol:
                ln[1] = r
                ln[2], ln[3] = min(ln[2], a), max(ln[3], b)
                break
        else:
            lines.append([r, r, a, b])
    return [tuple(ln) for ln in lines if ln[1] - ln[0] <= 8]  # thicker than that is a filled block


def detect_rules(image: Image.Image) -> list[Rule]:
    """Horizontal and vertical rules in image pixels."""
    scale = 1.0
    gray = image.convert("L")
    if max(gray.size) > WORK_SIDE:
        scale = max(gray.size) / WORK_SIDE
        gray = gray.resize((round(gray.width / scale), round(gray.height / scale)), Image.BILINEAR)
    arr = np.asarray(gray)
    dark = arr < min(160, int(arr.mean()) - 40)
    min_len = max(40, int(0.04 * max(arr.shape)))
    rules = []
    for r0, r1, a, b in _merge(_runs(dark, min_len)):
        rules.append(Rule((a * scale, r0 * scale, b * scale, (r1 + 1) * scale)))
    for c0, c1, a, b in _merge(_runs(dark.T.copy(), max(20, min_len // 2))):
        rules.append(Rule((c0 * scale, a * scale, (c1 + 1) * scale, b * scale)))
    return rules
