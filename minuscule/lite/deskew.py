"""Skew of a scanned page, from the sharpness of its row profile, and the straightened image."""

from __future__ import annotations

import numpy as np
from PIL import Image

MAX_ANGLE = 3.0  # degrees; scanners and phone captures of flat pages stay well inside this
STEP = 0.1


def estimate_skew(image: Image.Image) -> float:
    """The angle (degrees, counter-clockwise positive as in PIL's rotate) that makes text rows level.

    Rows of text give a spiky horizontal projection when level; the angle that maximises the variance of
    the row sums wins. Coarse search on a small copy, then a fine one around the best angle.
    """
    small = image.convert("L")
    small.thumbnail((900, 900))
    arr = np.asarray(small)
    ink = Image.fromarray(((arr < min(160, int(arr.mean()) - 40)) * 255).astype(np.uint8))

    def score(angle: float) -> float:
        rotated = np.asarray(ink.rotate(angle, resample=Image.NEAREST, fillcolor=0), dtype=np.float32)
        return float(rotated.sum(axis=1).var())

    coarse = max(np.arange(-MAX_ANGLE, MAX_ANGLE + 1e-6, 0.5), key=score)
    fine = max(np.arange(coarse - 0.5, coarse + 0.5 + 1e-6, STEP), key=score)
    return round(float(fine), 2)


def deskew(image: Image.Image, min_angle: float = 0.15) -> tuple[Image.Image, float]:
    """The straightened page (same size, white fill) and the angle it was turned by."""
    angle = estimate_skew(image)
    if abs(angle) < min_angle:
        return image, 0.0
    return image.rotate(angle, resample=Image.BICUBIC, fillcolor=(255, 255, 255) if image.mode == "RGB" else 255), angle
