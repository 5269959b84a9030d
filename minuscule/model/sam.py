"""SAM ViT-B image encoder with windowed/global attention, decomposed relative positions, neck and 16x compressor."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .vision_config import SamConfig

SAM_LN_EPS = 1e-6
MAX_BIAS_ELEMENTS = 1 << 26  # per attention chunk; bounds the materialised rel-pos bias


def resize_abs_pos(pos: torch.Tensor, size: int) -> torch.Tensor:
    """Resize a (1, G, G, C) position table to (1, size, size, C), bicubic with antialias in fp32."""
    if pos.shape[1] == size:
        return pos
    grid = pos.permute(0, 3, 1, 2).float()  # (1, C, G, G)
    grid = F.interpolate(grid, size=(size, size), mode="bicubic", antialias=True, align_corners=False)
    return grid.to(pos.dtype).permute(0, 2, 3, 1)  # (1, size, size, C)


def rel_pos_table(size: int, table: torch.Tensor) -> torch.Tensor:
    """Per-(query, key) relative embeddings (size, size, D) for one axis of a size-long grid.

    The stored table has one row per offset; for another grid it is resized linearly (fp32) to
    2*size - 1 rows, as trained with global attention at 64 and reused at 40 (tiles) or 80 (Large).
    """
    n = 2 * size - 1
    if table.shape[0] != n:
        resized = F.interpolate(table.float().t()[None], size=n, mode="linear")  # (1, D, n)
        table = resized[0].t().to(table.dtype)  # (n, D)
    coords = torch.arange(size, device=table.device)
    offsets = coords[:, None] - coords[None, :] + (size - 1)  # (size, size) in 0..n-1
    return table[offsets]  # (size, size, D)


class SamAttention(nn.Module):
    """Multi-head attention over an (H, W) grid with decomposed relative position bias."""

    def __init__(self, dim: int, heads: int, rel_size: int):
        super().__init__()
        self.heads = heads
        head_dim = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        # Zero init as in SAM: training starts without positional bias.
        self.rel_pos_h = nn.Parameter(torch.zeros(2 * rel_size - 1, head_dim))
        self.rel_pos_w = nn.Parameter(torch.zeros(2 * rel_size - 1, head_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        qkv = self.qkv(x).reshape(b, h * w, 3, self.heads, -1)  # (B, HW, 3, nH, D): rows are [q|k|v], head-major
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, nH, HW, D)
        rh = rel_pos_table(h, self.rel_pos_h)  # (H, H, D)
        rw = rel_pos_table(w, self.rel_pos_w)  # (W, W, D)
        # The full bias is B·nH·(HW)² values (800 MB in fp32 for one 1024 view), so query rows go in
        # chunks; every row's softmax is independent, so the result does not depend on the split.
        rows = max(w, (MAX_BIAS_ELEMENTS // max(1, b * self.heads * h * w)) // w * w)
        outs = [self._attend(q[:, :, i:i + rows], k, v, rh[i // w:(i + rows) // w], rw, w)
                for i in range(0, h * w, rows)]
        out = torch.cat(outs, dim=2)  # (B, nH, HW, D)
        out = out.transpose(1, 2).reshape(b, h, w, c)  # (B, H, W, nH*D)
        return self.proj(out)

    @staticmethod
    def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rh: torch.Tensor, rw: torch.Tensor,
                w: int) -> torch.Tensor:
        """Attention for whole query rows q (B, nH, r*W, D) with rh (r, H, D) and rw (W, W, D)."""
        b, n, m, d = q.shape
        r = m // w
        grid_q = q.reshape(b, n, r, w, d)  # (B, nH, r, W, D)
        # The bias uses the unscaled query; SDPA scales only q·k.
        bias_h = torch.einsum("bnhwd,hkd->bnhwk", grid_q, rh)  # (B, nH, r, W, kH)
        bias_w = torch.einsum("bnhwd,wkd->bnhwk", grid_q, rw)  # (B, nH, r, W, kW)
        bias = bias_h[..., :, None] + bias_w[..., None, :]  # (B, nH, r, W, kH, kW)
        bias = bias.reshape(b, n, m, -1)  # (B, nH, r*W, kH*kW)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (B, nH, r*W, D)


class SamMlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.lin1 = nn.Linear(dim, hidden)
        self.lin2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(F.gelu(self.lin1(x)))


class SamBlock(nn.Module):
    """Pre-LN transformer block; window > 0 attends inside zero-padded window x window tiles."""

    def __init__(self, cfg: SamConfig, window: int):
        super().__init__()
        self.window = window
        self.norm1 = nn.LayerNorm(cfg.width, eps=SAM_LN_EPS)
        self.attn = SamAttention(cfg.width, cfg.heads, window if window else cfg.pos_grid)
        self.norm2 = nn.LayerNorm(cfg.width, eps=SAM_LN_EPS)
        self.mlp = SamMlp(cfg.width, cfg.mlp_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x)
        if self.window:
            y = self._windowed(y)
        else:
            y = self.attn(y)
        x = x + y
        return x + self.mlp(self.norm2(x))

    def _windowed(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        s = self.window
        ph, pw = (-h) % s, (-w) % s
        # The padding is zeros after norm1 and is not masked: padded keys take part in attention,
        # exactly as the published weights were trained.
        x = F.pad(x, (0, 0, 0, pw, 0, ph))  # (B, Hp, Wp, C)
        hp, wp = h + ph, w + pw
        x = x.reshape(b, hp // s, s, wp // s, s, c)  # (B, nh, s, nw, s, C)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(-1, s, s, c)  # (B*nh*nw, s, s, C)
        x = self.attn(x)  # (B*nh*nw, s, s, C)
        x = x.reshape(b, hp // s, wp // s, s, s, c)  # (B, nh, nw, s, s, C)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, c)  # (B, Hp, Wp, C)
        return x[:, :h, :w, :]  # (B, H, W, C)


class PatchEmbed(nn.Module):
    def __init__(self, cfg: SamConfig):
        super().__init__()
        self.proj = nn.Conv2d(3, cfg.width, kernel_size=cfg.patch_size, stride=cfg.patch_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).permute(0, 2, 3, 1)  # (B, C, H, W) → (B, H, W, C)


class LayerNorm2d(nn.Module):
    """LayerNorm over the channel axis of a (B, C, H, W) map."""

    def __init__(self, channels: int, eps: float = SAM_LN_EPS):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        x = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class SamEncoder(nn.Module):
    """Pixels (B, 3, S, S) → compressed features (B, C_out, S/64, S/64); parameters as `model.sam_model.*`."""

    def __init__(self, cfg: SamConfig):
        super().__init__()
        self.cfg = cfg
        self.patch_embed = PatchEmbed(cfg)
        self.pos_embed = nn.Parameter(torch.zeros(1, cfg.pos_grid, cfg.pos_grid, cfg.width))
        self.blocks = nn.ModuleList(
            SamBlock(cfg, 0 if i in cfg.global_attn_indexes else cfg.window_size) for i in range(cfg.layers)
        )
        n = cfg.neck_channels
        self.neck = nn.Sequential(
            nn.Conv2d(cfg.width, n, kernel_size=1, bias=False),
            LayerNorm2d(n),
            nn.Conv2d(n, n, kernel_size=3, padding=1, bias=False),
            LayerNorm2d(n),
        )
        c2, c3 = cfg.downsample_channels
        self.net_2 = nn.Conv2d(n, c2, kernel_size=3, stride=2, padding=1, bias=False)
        self.net_3 = nn.Conv2d(c2, c3, kernel_size=3, stride=2, padding=1, bias=False)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        if pixels.shape[-1] != pixels.shape[-2]:
            raise ValueError(f"SAM expects square views, got {tuple(pixels.shape[-2:])}")
        x = self.patch_embed(pixels)  # (B, S/16, S/16, W)
        x = x + resize_abs_pos(self.pos_embed, x.shape[1])  # (B, G, G, W)
        for block in self.blocks:
            x = block(x)  # (B, G, G, W)
        x = self.neck(x.permute(0, 3, 1, 2))  # (B, neck, G, G)
        x = self.net_2(x)  # (B, c2, G/2, G/2)
        return self.net_3(x)  # (B, c3, G/4, G/4)
