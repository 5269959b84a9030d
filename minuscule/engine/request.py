"""Request, RequestOutput and FinishReason: what goes into the engine and what comes out."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import torch

from minuscule.engine.config import SamplingParams
from minuscule.engine.guards import GuardState


class FinishReason(str, enum.Enum):
    STOP = "stop"  # a stop id (EOS) was generated; it is the last token
    LENGTH = "length"  # max_tokens reached
    REPETITION = "repetition"  # the repetition guard fired


@dataclass
class Request:
    """One generation: prompt ids and, for an image prompt, either precomputed image embeddings
    (N, H) for its `<image>` placeholders or pixel inputs (an object with `global_view`, `tiles`
    and `grid`, such as the processor's ModelInputs) that the engine encodes at prefill."""

    request_id: str
    prompt_ids: list[int]
    params: SamplingParams = field(default_factory=SamplingParams)
    image_embeds: torch.Tensor | None = None
    pixels: Any = None

    def __post_init__(self) -> None:
        if not self.prompt_ids:
            raise ValueError(f"request {self.request_id}: empty prompt")
        if self.image_embeds is not None and self.pixels is not None:
            raise ValueError(f"request {self.request_id}: give image embeddings or pixels, not both")


@dataclass
class RequestOutput:
    """Generated ids so far (the prompt is not repeated); `finish_reason` is None while running.

    `new_ids` are the ids committed by the step that produced this output (for streaming).
    """

    request_id: str
    token_ids: list[int]
    new_ids: list[int]
    finish_reason: FinishReason | None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


class Sequence:
    """A running request: prompt + committed tokens, guard state and per-request counters.

    With n = len(tokens), the target cache holds positions 0..n-2 and the last token is pending
    (fed at position n-1 by the next pass). `draft_valid` is the last position whose FastMTP draft
    cache entry was computed from the target's own hidden state; `draft_gap` is a stretch of
    positions skipped when the draft cache was rebuilt after a long run without drafting.
    """

    def __init__(self, request: Request, guards: GuardState | None):
        self.request = request
        self.params = request.params
        self.tokens: list[int] = list(request.prompt_ids)
        self.prompt_len = len(self.tokens)
        self.generated: list[int] = []
        self.stop_ids = frozenset(request.params.stop_ids)
        self.guards = guards
        self.finish: FinishReason | None = None
        self.draft_valid = 0
        self.draft_gap = (0, 0)  # draft entries lo < p < hi were never computed (masked)
        self.steps = 0
        self.drafted = 0
        self.accepted = 0
        # Its own vision/prefill time, and its share (1/B) of each batched draft/decode step.
        self.seconds = {"vision": 0.0, "prefill": 0.0, "draft": 0.0, "decode": 0.0}

    @property
    def request_id(self) -> str:
        return self.request.request_id

    def commit(self, token: int) -> FinishReason | None:
        """Append one token; the finish reason when it ends the request (stop id, repetition, length)."""
        self.tokens.append(token)
        self.generated.append(token)
        repeated = self.guards.append(token) if self.guards is not None else False
        if token in self.stop_ids:
            self.finish = FinishReason.STOP
        elif repeated:
            self.finish = FinishReason.REPETITION
        elif len(self.generated) >= self.params.max_tokens:
            self.finish = FinishReason.LENGTH
        return self.finish

    def stats(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_len, "generated_tokens": len(self.generated), "decode_steps": self.steps,
                "drafted": self.drafted, "accepted": self.accepted,
                "tokens_per_step": round((len(self.generated) - 1) / self.steps, 4) if self.steps else None,
                "finish_reason": self.finish.value if self.finish is not None else None,
                "seconds": {k: round(v, 4) for k, v in self.seconds.items()}}
