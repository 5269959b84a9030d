"""FastMTP draft head (`mtp_module.heads.0.*`): one dense block reused recursively, sharing embed/norm/lm_head."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from minuscule.config import ModelConfig
from minuscule.model.decoder import DecoderLayer, KVCache, RMSNorm, rope_cos_sin


@dataclass
class DraftOutput:
    """One draft step: logits (B, T, V) in fp32 and the post-norm hidden state (B, T, H) fed to the next step."""

    logits: torch.Tensor
    hidden: torch.Tensor


class MTPHead(nn.Module):
    """x = eh_proj([enorm(embed(token_j)) ; hnorm(h_{j-1})]) → dense decoder block (its own KV cache)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.enorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.hnorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.eh_proj = nn.Linear(2 * cfg.hidden_size, cfg.hidden_size, bias=False)
        self.mtp_block = DecoderLayer(cfg, dense=True, intermediate_size=cfg.intermediate_size)

    def forward(self, token_embeds: torch.Tensor, prev_hidden: torch.Tensor, positions: torch.Tensor,
                cache: KVCache | None = None) -> torch.Tensor:
        """token_embeds, prev_hidden (B, T, H); positions (B, T) → block output before the shared norm."""
        # Position 0 has no previous token to pair with; the reference zeroes its embedding.
        token_embeds = torch.where((positions == 0).unsqueeze(-1), torch.zeros_like(token_embeds), token_embeds)
        x = self.eh_proj(torch.cat([self.enorm(token_embeds), self.hnorm(prev_hidden)], dim=-1))
        cos, sin = rope_cos_sin(positions, self.cfg.head_dim, self.cfg.rope_theta, x.dtype)
        out = self.mtp_block(x, cos, sin, cache, 0)
        if cache is not None:
            cache.advance(x.shape[1])
        return out


class MTPModule(nn.Module):
    """Container so the parameter names read `mtp_module.heads.0.*` as published."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.heads = nn.ModuleList(MTPHead(cfg) for _ in range(cfg.num_nextn_predict_layers))

    def new_cache(self, batch: int, max_len: int, dtype: torch.dtype | None = None,
                  device: torch.device | str | None = None) -> KVCache:
        head = self.heads[0]
        p = head.eh_proj.weight
        return KVCache.allocate(1, batch, head.cfg.num_attention_heads, head.cfg.head_dim, max_len,
                                dtype or p.dtype, device or p.device)


def draft_step(head: MTPHead, embed_tokens: nn.Embedding, final_norm: nn.Module, lm_head: nn.Linear,
               token_ids: torch.Tensor, prev_hidden: torch.Tensor, positions: torch.Tensor,
               cache: KVCache | None = None) -> DraftOutput:
    """One recursive FastMTP step.

    token_ids (B, T): token j at each position (the token whose embedding is paired with the hidden
    state of position j-1); prev_hidden (B, T, H): for the first step the target's post-norm hidden
    state at j-1, for later steps the previous step's `hidden`; positions (B, T): j. The shared final
    norm's output is both the logits input and the next step's hidden state (FastMTP's post-norm
    feedback).
    """
    out = head(embed_tokens(token_ids), prev_hidden, positions, cache)
    hidden = final_norm(out)
    return DraftOutput(lm_head(hidden).float(), hidden)
