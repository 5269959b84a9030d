"""CLIP-L/14 vision transformer that runs on SAM's compressed features instead of its own patches."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .vision_config import ClipConfig

CLIP_LN_EPS = 1e-5


def quick_gelu(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(1.702 * x)


def resize_clip_pos(table: torch.Tensor, n_patches: int) -> torch.Tensor:
    """(1 + G*G, C) table → (1 + n_patches, C): CLS row kept, the G x G grid resized bicubic (antialias, fp32)."""
    cls, grid = table[:1], table[1:]
    src = math.isqrt(grid.shape[0])
    dst = math.isqrt(n_patches)
    if dst * dst != n_patches:
        raise ValueError(f"CLIP expects a square feature grid, got {n_patches} positions")
    if src == dst:
        return table
    c = table.shape[-1]
    g = grid.reshape(1, src, src, c).permute(0, 3, 1, 2).float()  # (1, C, G, G)
    g = F.interpolate(g, size=(dst, dst), mode="bicubic", antialias=True, align_corners=False)
    g = g.to(table.dtype).permute(0, 2, 3, 1).reshape(dst * dst, c)  # (dst*dst, C)
    return torch.cat([cls, g], dim=0)  # (1 + dst*dst, C)


class ClipEmbeddings(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.class_embedding = nn.Parameter(torch.randn(cfg.width))
        # Never applied (SAM features replace it) but stored in the checkpoint, so kept for strict loading.
        self.patch_embedding = nn.Conv2d(3, cfg.width, kernel_size=cfg.patch_size, stride=cfg.patch_size, bias=False)
        self.position_embedding = nn.Embedding(cfg.num_positions, cfg.width)
        # Indexes the table; not a checkpoint tensor.
        self.register_buffer("position_ids", torch.arange(cfg.num_positions)[None], persistent=False)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        b = features.shape[0]
        patches = features.flatten(2).transpose(1, 2)  # (B, C, h, w) → (B, h*w, C), row-major
        cls = self.class_embedding.to(patches.dtype).expand(b, 1, -1)  # (B, 1, C)
        x = torch.cat([cls, patches], dim=1)  # (B, 1 + h*w, C)
        table = self.position_embedding(self.position_ids)[0]  # (1 + G*G, C)
        pos = resize_clip_pos(table, patches.shape[1])  # (1 + h*w, C)
        return x + pos[None].to(x.dtype)


class ClipAttention(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.heads = cfg.heads
        self.qkv_proj = nn.Linear(cfg.width, cfg.width * 3)
        self.out_proj = nn.Linear(cfg.width, cfg.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        qkv = self.qkv_proj(x).reshape(b, n, 3, self.heads, -1)  # (B, L, 3, nH, D)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, nH, L, D)
        out = F.scaled_dot_product_attention(q, k, v)  # (B, nH, L, D), bidirectional
        return self.out_proj(out.transpose(1, 2).reshape(b, n, c))  # (B, L, C)


class ClipMlp(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.width, cfg.mlp_dim)
        self.fc2 = nn.Linear(cfg.mlp_dim, cfg.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(quick_gelu(self.fc1(x)))


class ClipLayer(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(cfg.width, eps=CLIP_LN_EPS)
        self.self_attn = ClipAttention(cfg)
        self.layer_norm2 = nn.LayerNorm(cfg.width, eps=CLIP_LN_EPS)
        self.mlp = ClipMlp(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class ClipTransformer(nn.Module):
    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.layers = nn.ModuleList(ClipLayer(cfg) for _ in range(cfg.layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class ClipEncoder(nn.Module):
    """SAM features (B, C, h, w) → (B, 1 + h*w, C), CLS first, no final norm; parameters as `model.vision_model.*`."""

    def __init__(self, cfg: ClipConfig):
        super().__init__()
        self.cfg = cfg
        self.embeddings = ClipEmbeddings(cfg)
        self.pre_layrnorm = nn.LayerNorm(cfg.width, eps=CLIP_LN_EPS)  # (sic) published name
        self.transformer = ClipTransformer(cfg)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(features)  # (B, 1 + h*w, C)
        return self.transformer(self.pre_layrnorm(x))  # (B, 1 + h*w, C)
