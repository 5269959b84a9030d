"""DeepEncoder: SAM → compressor → CLIP, CLIP|SAM concatenation, projector, and the image-token layout."""

from __future__ import annotations

import math

import torch
from torch import nn

from .clip import ClipEncoder
from .sam import SamEncoder
from .vision_config import VisionConfig


class LinearProjector(nn.Module):
    """The published `MlpProjector` with projector_type "linear": one Linear at `projector.layers`."""

    def __init__(self, input_dim: int, n_embed: int):
        super().__init__()
        self.layers = nn.Linear(input_dim, n_embed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class DeepEncoder(nn.Module):
    """Square views (B, 3, S, S) → decoder-width features (B, (S/64)^2, n_embed), row-major."""

    def __init__(self, cfg: VisionConfig):
        super().__init__()
        self.cfg = cfg
        self.sam_model = SamEncoder(cfg.sam)
        self.vision_model = ClipEncoder(cfg.clip)
        self.projector = LinearProjector(cfg.projector_input_dim, cfg.n_embed)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        sam = self.sam_model(pixels)  # (B, C_sam, q, q)
        clip = self.vision_model(sam)  # (B, 1 + q*q, C_clip)
        sam_tokens = sam.flatten(2).transpose(1, 2)  # (B, q*q, C_sam)
        fused = torch.cat([clip[:, 1:], sam_tokens], dim=-1)  # (B, q*q, C_clip + C_sam): CLIP first, CLS dropped
        return self.projector(fused)  # (B, q*q, n_embed)

    def encode_image(
        self,
        global_view: torch.Tensor,
        tiles: torch.Tensor | None,
        grid: tuple[int, int],
        image_newline: torch.Tensor,
        view_seperator: torch.Tensor,
    ) -> torch.Tensor:
        """One image's placeholder embeddings (L, n_embed): global view (1, 3, S, S), tiles (n, 3, T, T)."""
        global_features = self(global_view)[0]  # (q*q, n_embed)
        tile_features = self(tiles) if tiles is not None and tiles.shape[0] > 0 else None  # (n, t*t, n_embed)
        return layout_image_features(global_features, tile_features, grid, image_newline, view_seperator)


def _with_newlines(grid: torch.Tensor, image_newline: torch.Tensor) -> torch.Tensor:
    rows, _, c = grid.shape
    newline = image_newline.to(grid.dtype)[None, None, :].expand(rows, 1, c)  # (rows, 1, C)
    return torch.cat([grid, newline], dim=1).reshape(-1, c)  # (rows, cols + 1, C) → (rows*(cols+1), C)


def layout_image_features(
    global_features: torch.Tensor,
    tile_features: torch.Tensor | None,
    grid: tuple[int, int],
    image_newline: torch.Tensor,
    view_seperator: torch.Tensor,
) -> torch.Tensor:
    """Arrange features in placeholder order: local grid, global grid (a newline after every row), separator.

    global_features: (q*q, C); tile_features: (w_t*h_t, t*t, C) in row-major tile order, or None
    when the image is not tiled; grid: (w_t, h_t) tiles across and down.
    Returns (L, C) with L = (t*h_t)*(t*w_t + 1) [if tiled] + q*(q + 1) + 1.
    """
    n, c = global_features.shape
    q = math.isqrt(n)
    if q * q != n:
        raise ValueError(f"global features must form a square grid, got {n} tokens")
    parts = []
    w_t, h_t = grid
    if tile_features is not None:
        n_tiles, m, _ = tile_features.shape
        t = math.isqrt(m)
        if n_tiles != w_t * h_t or t * t != m:
            raise ValueError(f"{n_tiles} tiles of {m} tokens do not form a {w_t}x{h_t} grid of square tiles")
        local = tile_features.reshape(h_t, w_t, t, t, c)  # (tile row, tile col, y, x, C)
        local = local.permute(0, 2, 1, 3, 4).reshape(h_t * t, w_t * t, c)  # (tile row·y, tile col·x, C)
        parts.append(_with_newlines(local, image_newline))  # (h_t*t*(w_t*t + 1), C)
    elif (w_t, h_t) != (1, 1):
        raise ValueError(f"tile grid {w_t}x{h_t} given without tile features")
    parts.append(_with_newlines(global_features.reshape(q, q, c), image_newline))  # (q*(q + 1), C)
    parts.append(view_seperator.to(global_features.dtype)[None, :])  # (1, C)
    return torch.cat(parts, dim=0)
