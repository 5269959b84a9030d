"""Degradations: deterministic per seed, keep the image size, and really change the pixels."""

from __future__ import annotations

import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from minuscule.synth.degrade import OPS, degrade


@pytest.fixture(scope="module")
def page() -> Image.Image:
    im = Image.new("RGB", (420, 300), "white")
    draw = ImageDraw.Draw(im)
    for y in range(20, 280, 16):
        draw.text((20, y), "Lorem ipsum dolor sit amet 12345 consectetur", fill="black")
    draw.rectangle((300, 40, 400, 120), outline="black")
    return im


@pytest.mark.parametrize("op", OPS)
def test_each_operation_changes_pixels_and_keeps_size(page, op):
    out = degrade(page, seed=5, ops=(op,))
    assert out.image.size == page.size
    assert out.image.mode == "RGB"
    assert len(out.ops) == 1 and out.ops[0].startswith(op)
    diff = np.abs(np.asarray(out.image, dtype=np.int16) - np.asarray(page, dtype=np.int16))
    assert diff.max() > 0


def test_same_seed_same_pixels_other_seed_other_pixels(page):
    a = degrade(page, seed=9)
    b = degrade(page, seed=9)
    c = degrade(page, seed=10)
    assert a.ops == b.ops
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert a.ops != c.ops or not np.array_equal(np.asarray(a.image), np.asarray(c.image))


def test_random_choice_uses_two_to_four_operations(page):
    counts = {len(degrade(page, seed=s).ops) for s in range(30)}
    assert counts <= {2, 3, 4} and len(counts) > 1


def test_ink_stays_darker_than_paper():
    """Degradations are capped: strokes as thick as body text stay clearly darker than the paper.
    (Geometric operations are left out here because they move the strokes off the mask.)"""
    im = Image.new("RGB", (400, 300), "white")
    draw = ImageDraw.Draw(im)
    for y in range(20, 280, 12):
        draw.rectangle((20, y, 380, y + 2), fill="black")
    ink = np.asarray(im.convert("L")) < 128
    flat = [op for op in OPS if op not in ("rotate", "skew")]
    rng = random.Random(0)
    for _ in range(16):
        ops = tuple(rng.sample(flat, 4))
        out = np.asarray(degrade(im, seed=rng.randrange(1000), ops=ops).image.convert("L"), dtype=np.float32)
        assert out[~ink].mean() - out[ink].mean() > 40, ops


def test_unknown_operation_is_an_error(page):
    with pytest.raises(ValueError, match="unknown degradation"):
        degrade(page, seed=1, ops=("melt",))
