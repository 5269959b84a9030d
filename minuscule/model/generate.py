"""Reference greedy decoding for one request: the baseline the batched/speculative engine must match."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from minuscule.model.ocr import OCRModel


def prepare_inputs(model: OCRModel, inputs: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(ids (1, T), image embeddings (N, H) or None) from plain ids or a processor's ModelInputs."""
    device = model.lm_head.weight.device
    if isinstance(inputs, (torch.Tensor, list, tuple)):
        return torch.as_tensor(inputs, dtype=torch.long, device=device).reshape(1, -1), None
    ids = torch.as_tensor(inputs.input_ids, dtype=torch.long, device=device).reshape(1, -1)
    if getattr(inputs, "global_view", None) is None:
        return ids, None
    dtype = model.lm_head.weight.dtype
    tiles = inputs.tiles if inputs.tiles is not None and inputs.tiles.shape[0] > 0 else None
    embeds = model.encode_image(inputs.global_view.to(device, dtype),
                                None if tiles is None else tiles.to(device, dtype), tuple(inputs.grid))
    return ids, embeds


@torch.inference_mode()
def generate_greedy(model: OCRModel, inputs: Any, max_new_tokens: int, eos_id: int | Sequence[int] | None = None,
                    use_cache: bool = True) -> list[int]:
    """Argmax decoding from a prompt; returns the new tokens (ending with EOS when it was produced).

    With `use_cache` the prompt is prefilled once and each step feeds one token through the KV cache;
    without it every step recomputes the whole sequence (slow, the definition the cache must match).
    """
    ids, image_embeds = prepare_inputs(model, inputs)
    stops = set() if eos_id is None else ({eos_id} if isinstance(eos_id, int) else set(eos_id))
    limit = model.cfg.max_position_embeddings
    if ids.shape[1] + max_new_tokens > limit:
        raise ValueError(f"prompt of {ids.shape[1]} tokens + {max_new_tokens} new exceeds {limit} positions")
    out: list[int] = []
    if max_new_tokens <= 0:
        return out
    if use_cache:
        cache = model.new_cache(1, ids.shape[1] + max_new_tokens)
        logits = model(ids, image_embeds, cache=cache, last_only=True).logits
        while True:
            tok = int(logits[0, -1].argmax())
            out.append(tok)
            if tok in stops or len(out) >= max_new_tokens:
                return out
            step = torch.tensor([[tok]], dtype=torch.long, device=ids.device)
            logits = model(step, cache=cache, last_only=True).logits
    seq = ids
    while True:
        logits = model(seq, image_embeds, last_only=True).logits
        tok = int(logits[0, -1].argmax())
        out.append(tok)
        if tok in stops or len(out) >= max_new_tokens:
            return out
        seq = torch.cat([seq, torch.tensor([[tok]], dtype=torch.long, device=seq.device)], dim=1)
