"""Random nano models for the model and engine tests."""

from __future__ import annotations

import torch

from minuscule.model.ocr import build_model


def varied_nano(cfg, seed: int = 7):
    """A random nano model with a wide weight spread (decoder and projector matrices x8), so that greedy
    output is a long, varied sequence rather than a one-token loop: it exercises more cache positions."""
    m = build_model(cfg, seed=seed)
    with torch.no_grad():
        for n, p in m.named_parameters():
            if p.dim() == 2 and not n.startswith(("model.sam_model", "model.vision_model")):
                p.mul_(8.0)
    return m
