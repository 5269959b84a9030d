"""OCRModel: DeepEncoder + MoE decoder (+ FastMTP head); images and ids in, logits and hidden states out."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

import torch
from torch import nn

from minuscule.config import ModelConfig
from minuscule.model.decoder import Decoder, KVCache
from minuscule.model.encoder import DeepEncoder
from minuscule.model.mtp import DraftOutput, MTPModule, draft_step


@dataclass
class ModelOutput:
    """logits (B, T', V) fp32 (T' = T, or 1 with last_only) and post-final-norm hidden states (B, T, H)."""

    logits: torch.Tensor
    hidden: torch.Tensor


class OCRBackbone(Decoder):
    """`model.*`: token embedding, decoder layers and norm, and the vision tower's modules at their published names."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        encoder = DeepEncoder(cfg.vision)
        # The encoder's children (sam_model, vision_model, projector) and any direct tensors are
        # registered here so that names read `model.sam_model.*` etc. as published; the encoder
        # object itself stays unregistered and is only called.
        for name, child in encoder.named_children():
            self.add_module(name, child)
        for name, p in encoder.named_parameters(recurse=False):
            self.register_parameter(name, p)
        for name, b in encoder.named_buffers(recurse=False):
            self.register_buffer(name, b, persistent=name not in encoder._non_persistent_buffers_set)
        object.__setattr__(self, "_encoder", encoder)
        # Learned layout vectors (randn/sqrt(H) init as in the reference), `model.image_newline` and
        # `model.view_seperator` (sic, the published spelling).
        scale = cfg.hidden_size**-0.5
        self.image_newline = nn.Parameter(torch.randn(cfg.hidden_size) * scale)
        self.view_seperator = nn.Parameter(torch.randn(cfg.hidden_size) * scale)

    @property
    def encoder(self) -> nn.Module:
        return self._encoder

    def sync_encoder(self) -> None:
        """Point the encoder's direct tensors at ours again after they were replaced (loading, moves)."""
        for name in list(self._encoder._parameters):
            self._encoder._parameters[name] = self._parameters[name]
        for name in list(self._encoder._buffers):
            self._encoder._buffers[name] = self._buffers[name]

    def _apply(self, fn: Any, recurse: bool = True) -> OCRBackbone:
        out = super()._apply(fn, recurse)
        self.sync_encoder()
        return out

    def train(self, mode: bool = True) -> OCRBackbone:
        super().train(mode)
        self._encoder.training = mode  # its children already follow; the wrapper too
        return self


class OCRModel(nn.Module):
    """The whole network with the published parameter names: `model.*`, `lm_head`, `mtp_module.heads.0.*`."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.model = OCRBackbone(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.mtp_module = MTPModule(cfg) if cfg.has_mtp else None

    # -- pieces --------------------------------------------------------------------------
    def encode_image(self, global_view: torch.Tensor, tiles: torch.Tensor | None,
                     grid: tuple[int, int]) -> torch.Tensor:
        """One image's views → its (L, H) placeholder embeddings: local grid, global grid, separator.

        global_view (1, 3, S, S); tiles (w_t*h_t, 3, T, T) row-major or None; grid (w_t, h_t).
        """
        m = self.model
        return m.encoder.encode_image(global_view, tiles, grid, m.image_newline, m.view_seperator)

    def embed(self, input_ids: torch.Tensor, image_embeds: torch.Tensor | None = None) -> torch.Tensor:
        """input_ids (B, T) → (B, T, H) with image embeddings scattered, in order, into the `<image>` positions."""
        x = self.model.embed_tokens(input_ids)
        mask = input_ids == self.cfg.image_token_id
        n_slots = int(mask.sum())
        n_feats = 0 if image_embeds is None else image_embeds.reshape(-1, x.shape[-1]).shape[0]
        if n_slots != n_feats:
            raise ValueError(f"{n_slots} <image> placeholders but {n_feats} image embeddings")
        if n_slots:
            x = x.masked_scatter(mask.unsqueeze(-1), image_embeds.reshape(-1, x.shape[-1]).to(x.dtype))
        return x

    def new_cache(self, batch: int, max_len: int) -> KVCache:
        return self.model.new_cache(batch, max_len)

    def new_draft_cache(self, batch: int, max_len: int) -> KVCache:
        if self.mtp_module is None:
            raise ValueError("this model has no FastMTP head")
        return self.mtp_module.new_cache(batch, max_len)

    # -- forward -------------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, image_embeds: torch.Tensor | None = None,
                cache: KVCache | None = None, positions: torch.Tensor | None = None,
                last_only: bool = False) -> ModelOutput:
        """Token ids (B, T) (+ image embeddings for their placeholders) → logits and hidden states."""
        hidden = self.model(self.embed(input_ids, image_embeds), positions, cache)
        h = hidden[:, -1:] if last_only else hidden
        return ModelOutput(self.lm_head(h).float(), hidden)

    def draft_step(self, token_ids: torch.Tensor, prev_hidden: torch.Tensor, positions: torch.Tensor,
                   cache: KVCache | None = None) -> DraftOutput:
        """One FastMTP step with the shared embedding, final norm and lm_head (see mtp.draft_step)."""
        if self.mtp_module is None:
            raise ValueError("this model has no FastMTP head")
        return draft_step(self.mtp_module.heads[0], self.model.embed_tokens, self.model.norm, self.lm_head,
                          token_ids, prev_hidden, positions, cache)

    # -- accounting ----------------------------------------------------------------------
    def published_tensors(self) -> dict[str, nn.Parameter]:
        """Every checkpoint tensor by its published name (parameters only; buffers are derived)."""
        return dict(self.named_parameters())

    def active_parameters_per_token(self) -> int:
        """Decoder weights one generated token touches: attention, dense or top-k + shared experts,
        norms and lm_head. The embedding row lookup, the vision tower (per page) and the draft head
        (optional) are not counted — the convention behind DeepSeek's "A570M"."""
        cfg = self.cfg
        total = self.model.norm.weight.numel() + self.lm_head.weight.numel()
        for i, layer in enumerate(self.model.layers):
            total += sum(p.numel() for n, p in layer.named_parameters() if not n.startswith("mlp."))
            if cfg.is_moe_layer(i):
                mlp = layer.mlp
                total += mlp.gate.weight.numel() + sum(p.numel() for p in mlp.shared_experts.parameters())
                total += cfg.num_experts_per_tok * sum(p.numel() for p in mlp.experts[0].parameters())
            else:
                total += sum(p.numel() for p in layer.mlp.parameters())
        return total


@contextlib.contextmanager
def parameters_on_meta() -> Iterator[None]:
    """Build modules with parameters on the meta device (no memory, no init cost) but real buffers.

    Loading then replaces each parameter with the checkpoint tensor; derived buffers such as
    CLIP's position ids stay valid, unlike with a whole-module `torch.device("meta")`.
    """
    original = nn.Module.register_parameter

    def register(module: nn.Module, name: str, param: nn.Parameter | None) -> None:
        if param is not None and param.device.type != "meta":
            param = nn.Parameter(param.detach().to("meta"), requires_grad=param.requires_grad)
        original(module, name, param)

    nn.Module.register_parameter = register  # type: ignore[method-assign]
    try:
        yield
    finally:
        nn.Module.register_parameter = original  # type: ignore[method-assign]


def build_model(cfg: ModelConfig, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32,
                seed: int | None = None) -> OCRModel:
    """A randomly initialised model, created directly in `dtype` ("meta": shapes only, no memory)."""
    if seed is not None:
        torch.manual_seed(seed)
    if str(device) == "meta":
        with torch.device("meta"):
            return OCRModel(cfg)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # no fp32 copy of the real-size weights on the way to bf16
    try:
        with torch.device(device):
            model = OCRModel(cfg)
            init_text_weights(model)
    finally:
        torch.set_default_dtype(previous)
    return model.to(dtype).eval()


@torch.no_grad()
def init_text_weights(model: OCRModel, std: float = 0.02) -> None:
    """Decoder, lm_head and draft head: normal(0, std) matrices and embeddings (the reference
    `initializer_range`), unit norms. The vision tower keeps its own initialisation."""
    parts = [model.model.embed_tokens, model.model.layers, model.model.norm, model.lm_head]
    if model.mtp_module is not None:
        parts.append(model.mtp_module)
    for part in parts:
        for name, p in part.named_parameters():
            if name.endswith("norm.weight") or name == "weight" and p.dim() == 1:
                p.fill_(1.0)
            else:
                p.normal_(0.0, std)
