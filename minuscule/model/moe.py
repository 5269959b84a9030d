"""SwiGLU MLP and the DeepSeek-MoE block: fp32 softmax router, greedy top-k, routed + shared experts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from minuscule.config import ModelConfig


class MLP(nn.Module):
    """down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Router(nn.Module):
    """`mlp.gate`: logits and softmax in fp32, top-k without sorting; weights optionally renormalised, then scaled."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(cfg.n_routed_experts, cfg.hidden_size))
        nn.init.kaiming_uniform_(self.weight, a=5**0.5)
        self.top_k = cfg.num_experts_per_tok
        self.norm_topk_prob = cfg.norm_topk_prob
        self.scaling = cfg.routed_scaling_factor

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (N, H) → (expert ids (N, k), fp32 weights (N, k))."""
        scores = F.linear(x.float(), self.weight.float()).softmax(dim=-1)
        weights, ids = torch.topk(scores, k=self.top_k, dim=-1, sorted=False)
        if self.norm_topk_prob and self.top_k > 1:
            weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
        return ids, weights * self.scaling


class MoE(nn.Module):
    """Routed experts (each an MLP of moe_intermediate_size) plus the shared experts as one wider MLP."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate = Router(cfg)
        self.experts = nn.ModuleList(MLP(cfg.hidden_size, cfg.moe_intermediate_size) for _ in range(cfg.n_routed_experts))
        self.shared_experts = (MLP(cfg.hidden_size, cfg.moe_intermediate_size * cfg.n_shared_experts)
                               if cfg.n_shared_experts else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # (N, H)
        ids, weights = self.gate(flat)  # (N, k)
        n, k = ids.shape
        # Each (token, slot) pair gets its expert's output in fp32; the weighted sum over the k slots
        # is then taken in slot order in fp32, as the reference's inference path does.
        outs = flat.new_zeros((n * k, shape[-1]), dtype=torch.float32)
        flat_ids = ids.reshape(-1)
        for e in torch.unique(flat_ids).tolist():
            rows = (flat_ids == e).nonzero(as_tuple=True)[0]
            outs[rows] = self.experts[e](flat[rows // k]).float()
        routed = (outs.view(n, k, -1) * weights.unsqueeze(-1)).sum(dim=1).to(x.dtype)
        y = routed.view(shape)
        if self.shared_experts is not None:
            y = y + self.shared_experts(x)
        return y
