"""Runs batches on the model with per-slot KV caches: target prefill/verify passes and FastMTP draft passes.

This is the engine's only contact with the network. It calls the model's own modules (norms,
projections, MoE, lm_head) in the model's order, but attends over a slot cache where every row
has its own length, so one pass serves a batch of sequences at different positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from minuscule.engine.config import EngineConfig
from minuscule.engine.kv_cache import HiddenStore, SlotCache
from minuscule.model.decoder import DecoderLayer, apply_rope, rope_cos_sin
from minuscule.model.generate import prepare_inputs
from minuscule.model.ocr import OCRModel


@dataclass
class Pass:
    """Where one forward pass attends: rows row0.. of a slot cache at `positions` (B, T), each row's
    positions contiguous. Built once per pass, so the mask and the host reads happen once, not per layer.

    Query (b, t) sees keys at positions key_floor..positions[b, t]; entries past a row's own
    position (stale drafts, other rows' padding) are masked, which is what makes rollback free.
    `gaps` (B, 2) masks positions lo < p < hi of each row as well (draft entries never computed).
    """

    positions: torch.Tensor
    row0: int
    span: int  # keys 0..span-1 are read
    start: int  # first position of a single row (-1 for several rows)
    mask: torch.Tensor | None  # (B, 1, T, span) additive (0 or -inf), or None for the reference decoder's own calls
    causal: bool = False
    rows: torch.Tensor | None = None  # (B, T) slot of each entry, for cache writes of several rows

    @classmethod
    def build(cls, positions: torch.Tensor, row0: int = 0, key_floor: int = 0,
              gaps: torch.Tensor | None = None, dtype: torch.dtype = torch.float32) -> Pass:
        b, t = positions.shape
        ends = positions[:, [0, -1]].tolist()  # one host read: first and last position of each row
        span = max(last for _, last in ends) + 1
        start = ends[0][0] if b == 1 else -1
        rows = row0 + torch.arange(b, device=positions.device)[:, None].expand(b, t) if b > 1 else None
        # One row from position 0, or one token after a full prefix: the exact calls the reference
        # decoder makes, so that a single request reproduces plain decoding bit for bit. Rows that
        # all start at position 0 (prompts, right-padded) are causal too: every key they read is
        # written by this pass.
        if key_floor == 0 and gaps is None:
            if b == 1 and (start == 0 or t == 1):
                return cls(positions, row0, span, start, None, causal=start == 0 and t > 1)
            if b > 1 and t > 1 and all(first == 0 for first, _ in ends):
                return cls(positions, row0, span, start, None, causal=True, rows=rows)
        key_pos = torch.arange(span, device=positions.device)
        mask = (key_pos <= positions[:, :, None]) & (key_pos >= key_floor)  # (B, T, span)
        if gaps is not None:
            lo, hi = gaps[:, 0, None, None], gaps[:, 1, None, None]  # (B, 1, 1)
            mask &= (key_pos <= lo) | (key_pos >= hi)
        # Additive in the activations' dtype: attention would convert a boolean mask in every layer
        # (same result, bit for bit).
        bias = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))
        return cls(positions, row0, span, start, bias.unsqueeze(1), rows=rows)


def _attend(layer: DecoderLayer, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: SlotCache,
            index: int, ps: Pass) -> torch.Tensor:
    """Self-attention of one layer: write this pass's keys and values, attend as `ps` says."""
    attn = layer.self_attn
    b, t, _ = x.shape
    q = attn.q_proj(x).view(b, t, attn.num_heads, attn.head_dim).transpose(1, 2)  # (B, H, T, D)
    k = attn.k_proj(x).view(b, t, attn.num_heads, attn.head_dim).transpose(1, 2)
    v = attn.v_proj(x).view(b, t, attn.num_heads, attn.head_dim).transpose(1, 2)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    keys, values = cache.write(index, ps.positions, k, v, ps.span, ps.row0, ps.start, ps.rows)
    if ps.mask is None:
        out = F.scaled_dot_product_attention(q, keys, values, is_causal=ps.causal)
    else:
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=ps.mask)
    return attn.o_proj(out.transpose(1, 2).reshape(b, t, -1))


def _layer(layer: DecoderLayer, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: SlotCache,
           index: int, ps: Pass) -> torch.Tensor:
    """DecoderLayer.forward with the slot cache: x + attn(norm(x)), then h + mlp(norm(h))."""
    h = x + _attend(layer, layer.input_layernorm(x), cos, sin, cache, index, ps)
    return h + layer.mlp(layer.post_attention_layernorm(h))


class Runner:
    """Owns the caches of `cfg.max_batch` slots and runs target and draft passes on slot ranges."""

    def __init__(self, model: OCRModel, cfg: EngineConfig, with_draft: bool):
        self.model = model
        mc = model.cfg
        p = model.lm_head.weight
        self.dtype, self.device = p.dtype, p.device
        self.capacity = cfg.max_len
        self.kv = SlotCache(mc.num_hidden_layers, cfg.max_batch, mc.num_attention_heads, mc.head_dim,
                            cfg.max_len, p.dtype, p.device)
        self.draft_kv: SlotCache | None = None
        self.hidden: HiddenStore | None = None
        if with_draft:
            if model.mtp_module is None:
                raise ValueError("the fastmtp proposer needs a model with a FastMTP head")
            self.draft_kv = SlotCache(1, cfg.max_batch, mc.num_attention_heads, mc.head_dim, cfg.max_len,
                                      p.dtype, p.device)
            self.hidden = HiddenStore(cfg.max_batch, cfg.max_len, mc.hidden_size, p.dtype, p.device)

    # -- target ------------------------------------------------------------------------------
    def encode(self, pixels: Any) -> torch.Tensor | None:
        """The image embeddings (N, H) of pixel inputs (global view, tiles, grid): the vision encoder."""
        return prepare_inputs(self.model, pixels)[1]

    def target(self, ids: torch.Tensor, positions: torch.Tensor, row0: int = 0,
               image_embeds: torch.Tensor | None = None, prompt: bool = False,
               last_only: bool = False, pick: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """ids, positions (B, T) for slots row0.. → (fp32 logits (B, T or 1, V), post-norm hidden (B, T, H)).
        Logits only at the last column with `last_only`, or at column pick[b] of each row with `pick` (B,).

        Only a prompt's `<image>` ids are placeholders for image embeddings; a generated or drafted
        id that happens to equal it is an ordinary token.
        """
        m = self.model
        x = m.embed(ids, image_embeds) if prompt else m.model.embed_tokens(ids)
        cos, sin = rope_cos_sin(positions, m.cfg.head_dim, m.cfg.rope_theta, x.dtype)
        ps = Pass.build(positions, row0, dtype=x.dtype)
        for i, layer in enumerate(m.model.layers):
            x = _layer(layer, x, cos, sin, self.kv, i, ps)
        hidden = m.model.norm(x)
        if pick is not None:
            h = hidden[torch.arange(hidden.shape[0], device=hidden.device), pick][:, None]  # (B, 1, H)
        else:
            h = hidden[:, -1:] if last_only else hidden
        return m.lm_head(h).float(), hidden

    # -- FastMTP draft -----------------------------------------------------------------------
    def draft(self, token_ids: torch.Tensor, prev_hidden: torch.Tensor, positions: torch.Tensor,
              pick: torch.Tensor | None = None, row0: int = 0,
              gaps: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """One draft pass (mtp.draft_step over the slot draft cache) → (fp32 logits (B, V), hidden (B, H))
        at column `pick[b]` of each row (the last column when None).

        Pairs follow draft_step: token j, the hidden state of position j-1, position j. Position 0
        has nothing to pair with and is never drafted, so keys start at position 1; `gaps` (B, 2)
        masks each row's stretch of never-computed entries.
        """
        m = self.model
        head = m.mtp_module.heads[0]
        te = m.model.embed_tokens(token_ids)
        x = head.eh_proj(torch.cat([head.enorm(te), head.hnorm(prev_hidden)], dim=-1))
        cos, sin = rope_cos_sin(positions, m.cfg.head_dim, m.cfg.rope_theta, x.dtype)
        out = _layer(head.mtp_block, x, cos, sin, self.draft_kv, 0, Pass.build(positions, row0, 1, gaps, x.dtype))
        b = out.shape[0]
        if pick is None:
            sel = out[:, -1]  # (B, H)
        else:
            sel = out[torch.arange(b, device=out.device), pick]  # (B, H)
        hidden = m.model.norm(sel)
        return m.lm_head(hidden).float(), hidden

    # -- slots -------------------------------------------------------------------------------
    def move(self, src: int, dst: int, length: int) -> None:
        self.kv.move(src, dst, length)
        if self.draft_kv is not None:
            self.draft_kv.move(src, dst, length)
            self.hidden.move(src, dst, length)
