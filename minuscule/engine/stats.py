"""Engine counters: tokens per step, acceptance per draft position, drafted/accepted, tokens/s, time split."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EngineStats:
    """Cumulative over an engine's life (or since `reset`).

    A "sequence step" is one running sequence in one decode step. tokens_per_step (the mean
    acceptance length, FastMTP's tau) = committed decode tokens / sequence steps; the acceptance
    of draft position j = sequence steps where drafts 1..j were all accepted / sequence steps that
    drafted at least j tokens. With a fixed K, tau = 1 + sum_j p_j.
    """

    steps: int = 0  # engine steps with a decode pass
    seq_steps: int = 0
    decode_tokens: int = 0  # committed by decode steps (the first token of each request comes from prefill)
    prefill_tokens: int = 0
    generated: int = 0  # all generated tokens incl. the prefill's first
    requests: int = 0
    drafted: int = 0
    accepted: int = 0
    drafted_at: list[int] = field(default_factory=list)  # per draft position
    accepted_at: list[int] = field(default_factory=list)
    k_steps: dict[int, int] = field(default_factory=dict)  # K chosen -> engine steps
    seconds: dict[str, float] = field(default_factory=lambda: {"vision": 0.0, "prefill": 0.0, "draft": 0.0,
                                                                 "decode": 0.0})

    def record_step(self, k: int, accepted: list[int], committed: list[int]) -> None:
        self.steps += 1
        self.k_steps[k] = self.k_steps.get(k, 0) + 1
        while len(self.drafted_at) < k:
            self.drafted_at.append(0)
            self.accepted_at.append(0)
        for a, c in zip(accepted, committed):
            self.seq_steps += 1
            self.decode_tokens += c
            self.generated += c
            self.drafted += k
            self.accepted += a
            for j in range(k):
                self.drafted_at[j] += 1
                if j < a:
                    self.accepted_at[j] += 1

    def to_dict(self) -> dict[str, Any]:
        busy = sum(self.seconds.values())
        return {
            "requests": self.requests,
            "generated_tokens": self.generated,
            "prefill_tokens": self.prefill_tokens,
            "decode_steps": self.steps,
            "tokens_per_step": round(self.decode_tokens / self.seq_steps, 4) if self.seq_steps else None,
            "drafted": self.drafted,
            "accepted": self.accepted,
            "acceptance_rate": round(self.accepted / self.drafted, 4) if self.drafted else None,
            "acceptance_per_position": [round(a / d, 4) if d else None for a, d in zip(self.accepted_at, self.drafted_at)],
            "k_steps": {str(k): n for k, n in sorted(self.k_steps.items())},
            "tokens_per_s": round(self.generated / busy, 2) if busy else None,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }
