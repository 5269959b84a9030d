"""Deterministic scan-like degradations of a page image that keep its size (and so its reference and tests)."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter

# Applied in this order when chosen: geometry, then ink, then light, then sensor and compression.
OPS = ("rotate", "skew", "ink_bleed", "low_contrast", "uneven_lighting", "scan_lines", "downscale", "blur",
       "gaussian_noise", "salt_pepper", "jpeg")


@dataclass(frozen=True)
class Degraded:
    image: Image.Image
    ops: tuple[str, ...]  # the operations applied, each with its parameter, e.g. "rotate(-0.83)"


def _rotate(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    angle = rng.uniform(-1.5, 1.5)
    return im.rotate(angle, resample=Image.BILINEAR, expand=False, fillcolor=(255, 255, 255)), f"rotate({angle:.2f})"


def _skew(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    s = rng.uniform(-0.02, 0.02)
    w, h = im.size
    out = im.transform((w, h), Image.AFFINE, (1, s, -s * h / 2, 0, 1, 0), resample=Image.BILINEAR,
                       fillcolor=(255, 255, 255))
    return out, f"skew({s:.3f})"


def _ink_bleed(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    a = rng.uniform(0.35, 0.7)
    # A 3x3 minimum (ink spreads by a pixel) as two separable passes; PIL's MinFilter is 10x slower.
    x = np.asarray(im)
    rows = x.copy()
    np.minimum(rows[1:], x[:-1], out=rows[1:])
    np.minimum(rows[:-1], x[1:], out=rows[:-1])
    spread = rows.copy()
    np.minimum(spread[:, 1:], rows[:, :-1], out=spread[:, 1:])
    np.minimum(spread[:, :-1], rows[:, 1:], out=spread[:, :-1])
    soft = Image.fromarray(spread).filter(ImageFilter.BoxBlur(1))
    return Image.blend(im, soft, a), f"ink_bleed({a:.2f})"


def _low_contrast(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    c = rng.uniform(0.45, 0.75)
    # Paper is grey to slightly warm (old or recycled stock), never a saturated colour.
    g = rng.uniform(215, 248)
    paper = np.array([min(255.0, g + rng.uniform(0, 7)), g, g - rng.uniform(0, 14)], dtype=np.float32)
    x = np.asarray(im, dtype=np.float32)
    out = paper - (255.0 - x) * c * (paper / 255.0)
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)), f"low_contrast({c:.2f})"


def _uneven_lighting(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    w, h = im.size
    cx, cy = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
    low = rng.uniform(0.6, 0.85)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
    gain = 1.0 - (1.0 - low) * d / max(float(d.max()), 1.0)
    out = np.asarray(im, dtype=np.float32) * gain[..., None]
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)), f"uneven_lighting({low:.2f})"


def _scan_lines(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    period = rng.randint(3, 7)
    depth = rng.uniform(0.04, 0.12)
    x = np.asarray(im, dtype=np.float32).copy()
    x[::period] *= 1.0 - depth
    # A few long faint streaks, as from dust on a scanner glass.
    for _ in range(rng.randint(0, 3)):
        col = rng.randrange(x.shape[1])
        x[:, col:col + rng.randint(1, 2)] *= 1.0 - rng.uniform(0.1, 0.3)
    return Image.fromarray(np.clip(x, 0, 255).astype(np.uint8)), f"scan_lines({period},{depth:.2f})"


def _downscale(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    f = rng.uniform(0.45, 0.75)
    w, h = im.size
    small = im.resize((max(1, int(w * f)), max(1, int(h * f))), Image.BILINEAR)
    return small.resize((w, h), Image.BILINEAR), f"downscale({f:.2f})"


def _blur(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    r = rng.uniform(0.5, 1.2)
    return im.filter(ImageFilter.GaussianBlur(r)), f"blur({r:.2f})"


def _gaussian_noise(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    sigma = rng.uniform(4, 14)
    gen = np.random.default_rng(rng.getrandbits(63))
    x = np.asarray(im, dtype=np.float32) + gen.normal(0, sigma, (im.size[1], im.size[0], 1)).astype(np.float32)
    return Image.fromarray(np.clip(x, 0, 255).astype(np.uint8)), f"gaussian_noise({sigma:.1f})"


def _salt_pepper(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    p = rng.uniform(0.001, 0.005)
    gen = np.random.default_rng(rng.getrandbits(63))
    x = np.asarray(im).copy()
    u = gen.random((im.size[1], im.size[0]))
    x[u < p / 2] = 0
    x[u > 1 - p / 2] = 255
    return Image.fromarray(x), f"salt_pepper({p:.4f})"


def _jpeg(im: Image.Image, rng: random.Random) -> tuple[Image.Image, str]:
    q = rng.randint(25, 70)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=q)
    buf.seek(0)
    return Image.open(buf).convert("RGB"), f"jpeg({q})"


_FUNCS = {name: globals()[f"_{name}"] for name in OPS}


def degrade(image: Image.Image, seed: int, ops: tuple[str, ...] | None = None) -> Degraded:
    """Apply 2-4 randomly chosen operations (or exactly `ops`), same seed → same pixels."""
    rng = random.Random(seed)
    if ops is None:
        chosen = set(rng.sample(OPS, rng.randint(2, 4)))
    else:
        unknown = set(ops) - set(OPS)
        if unknown:
            raise ValueError(f"unknown degradation(s): {', '.join(sorted(unknown))}; expected {', '.join(OPS)}")
        chosen = set(ops)
    im = image.convert("RGB")
    applied = []
    for name in OPS:
        if name in chosen:
            im, label = _FUNCS[name](im, rng)
            applied.append(label)
    assert im.size == image.size
    return Degraded(im, tuple(applied))
