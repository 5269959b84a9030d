"""DeepSeek-V2-style decoder of DeepSeek-OCR / jina-ocr-v1: RMSNorm, NeoX RoPE, MHA, dense + MoE layers."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from minuscule.config import ModelConfig
from minuscule.model.moe import MLP, MoE


class RMSNorm(nn.Module):
    """RMSNorm computed in fp32 and cast back before the weight, as the reference does."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables (..., T, head_dim) for integer positions; frequencies in fp32 like Llama's rotary."""
    exponent = torch.arange(0, head_dim, 2, dtype=torch.int64, device=positions.device).float() / head_dim
    inv_freq = 1.0 / (theta**exponent)
    freqs = positions.float()[..., None] * inv_freq  # (..., T, head_dim/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (B, H, T, D); cos/sin (B, T, D) broadcast over heads. NeoX rotate-half, no interleave."""
    return x * cos.unsqueeze(1) + rotate_half(x) * sin.unsqueeze(1)


@dataclass
class KVCache:
    """Per-layer key/value buffers (B, H, max_len, D) preallocated once; `length` positions are valid.

    Layers write at [length, length + T) during a forward; the caller advances `length` once all
    layers have run (the decoder does it), and `truncate(n)` rolls back rejected positions.
    """

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    length: int = 0

    @classmethod
    def allocate(cls, num_layers: int, batch: int, heads: int, head_dim: int, max_len: int,
                 dtype: torch.dtype, device: torch.device | str = "cpu") -> KVCache:
        shape = (batch, heads, max_len, head_dim)
        return cls([torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)],
                   [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)])

    @property
    def capacity(self) -> int:
        return self.keys[0].shape[2]

    def write(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store k/v (B, H, T, D) at the current position; return all valid keys/values incl. them."""
        end = self.length + k.shape[2]
        if end > self.capacity:
            raise ValueError(f"KV cache full: {end} positions needed, {self.capacity} allocated")
        self.keys[layer][:, :, self.length:end] = k
        self.values[layer][:, :, self.length:end] = v
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def advance(self, n: int) -> None:
        self.length += n

    def truncate(self, n: int) -> None:
        if not 0 <= n <= self.length:
            raise ValueError(f"cannot truncate a KV cache of length {self.length} to {n}")
        self.length = n


class Attention(nn.Module):
    """Multi-head attention (Llama layout, no biases) with RoPE over the full head dim."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        h, d = cfg.num_attention_heads, cfg.head_dim
        self.num_heads, self.head_dim = h, d
        self.q_proj = nn.Linear(cfg.hidden_size, h * d, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, h * d, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, h * d, bias=False)
        self.o_proj = nn.Linear(h * d, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, D)
        k = self.k_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.write(layer, k, v)
        if past == 0:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        elif t == 1:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            # Queries sit at past..past+t-1 and see every key up to their own position.
            mask = torch.ones(t, past + t, dtype=torch.bool, device=x.device).tril(diagonal=past)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class DecoderLayer(nn.Module):
    """Pre-norm block: x + attn(norm(x)), then h + mlp(norm(h)); mlp is dense or MoE."""

    def __init__(self, cfg: ModelConfig, dense: bool, intermediate_size: int | None = None):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp: nn.Module = MLP(cfg.hidden_size, intermediate_size or cfg.intermediate_size) if dense else MoE(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, cache, layer)
        return h + self.mlp(self.post_attention_layernorm(h))


class Decoder(nn.Module):
    """The layer stack and final norm (embedding and lm_head live on the owning model)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(
            DecoderLayer(cfg, dense=i < cfg.first_k_dense_replace) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def new_cache(self, batch: int, max_len: int, dtype: torch.dtype | None = None,
                  device: torch.device | str | None = None) -> KVCache:
        p = self.norm.weight
        return KVCache.allocate(len(self.layers), batch, self.cfg.num_attention_heads, self.cfg.head_dim,
                                max_len, dtype or p.dtype, device or p.device)

    def forward(self, embeds: torch.Tensor, positions: torch.Tensor | None = None,
                cache: KVCache | None = None) -> torch.Tensor:
        """embeds (B, T, H) → post-final-norm hidden states (B, T, H).

        Positions default to 0..T-1 after the cached prefix; the cache advances by T.
        """
        b, t, _ = embeds.shape
        if positions is None:
            start = cache.length if cache is not None else 0
            positions = torch.arange(start, start + t, device=embeds.device).expand(b, t)
        cos, sin = rope_cos_sin(positions, self.cfg.head_dim, self.cfg.rope_theta, embeds.dtype)
        x = embeds
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, cache, i)
        if cache is not None:
            cache.advance(t)
        return self.norm(x)
